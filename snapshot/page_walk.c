/*
 * page_walk.c — the in-page walker's scripts (issue 13, point 4d), split
 * out of page_js.c: what page_js.c's header says about where a script runs
 * and what it returns holds here too. They are registered in page_js.c's
 * snap_page_scripts like every other script (the sink refuses any other),
 * declared in page_js.h, and run by observe_walk.c.
 */
#include "snapshot/snap_int.h"
#include "snapshot/page_js.h"

/* ==== the snapshot (observe_walk.c) ==== */

/* The in-page walker (issue 13, point 4; the default: snap_opts.ax_tree
 * turns it off). Runs:
 * in cdpgate's isolated world of a frame (snap_frame_world), so the page's
 * scripts cannot patch what it calls. Walks the flat tree (open shadow
 * roots followed, slots by their assigned nodes), skips what the AX tree
 * ignores (display:none, aria-hidden, inert; visibility:hidden elements
 * print nothing themselves but their children are walked), and computes
 * for each element the role (HTML-AAM implicit roles, an explicit role
 * with the none/presentation rules), the accessible name (accname 1.2,
 * simplified: aria-labelledby, aria-label, a control's labels, alt, title,
 * placeholder, a button's value, name from contents for the roles that
 * allow it), the value of text fields and comboboxes (NEVER of a field
 * the one secret-field rule calls secret (SNAP_JS_SECRET_KIND, page_js.h:
 * an input of type password, autocomplete holding password, one-time-code
 * or cc-), nor of one that ever was: those get state z and no value; any editable element is
 * tested too, a secret one's children are not walked, and a name read
 * from a secret element's contents is "[secret]": red team s12, W1),
 * the states the view shows
 * and a heading's level. It keeps the nodes it printed in
 * __cdpgateWalk.els (index = record) with the document's mutation count,
 * and gives each element it prints an id for the life of the document
 * (__cdpgateWalk.ids, a WeakMap; .by maps an id back to a WeakRef of its
 * element: snap_js_walk_ref_fn); .sk keeps the secret kinds each field
 * ever had (SNAP_SECRET_* bits: 1 password, 2 one-time code or current or
 * new password, 4 card).
 * Four parts (C caps a string literal at 4095 bytes): snap_js_walk_def1..3
 * declare the tables and functions as globals of the isolated world (the
 * page cannot see them), sent before snap_js_walk_expr, which walks.
 * The output: one string, "W1 TAB mutations TAB u-if-unsure" then one record
 * a line: depth TAB role TAB states TAB level TAB =name TAB value (=text
 * or #number) TAB id (the element's, empty for text and the root), every
 * control character of page text turned into a space. It is cut into
 * pieces of at most 85,000 UTF-16 units (at most 255,000 bytes of UTF-8;
 * never between the two halves of a surrogate pair), kept in the world
 * (__cdpgateWalk.pq) but the first, so that no buffer of cdpgate holds
 * the whole output (a large page's is megabytes). Returns: the number of
 * pieces left, a newline, then the first piece; snap_js_walk_next_expr
 * hands out the others in order.
 * "u" in the header: a tree deeper than it walks, or a closed shadow root
 * it infers (w_closed: a custom element without an open root whose light
 * child or text has no box, or with no light content and a box of its
 * own; the walk stops there): the caller falls back to the AX tree.
 * State letter "u" on a record: a name or role it could not settle (an
 * aria-labelledby id not found, a focusable custom element without a
 * role, a long name from attributes): the caller reads that element's AX
 * node (observe_walk.c, the per-node fallback). Read by
 * snap_obs_walk_read (observe_walk.c), which trusts none of it. */
const char snap_js_walk_def1[] =
    "var w_g=globalThis,w_W,w_M,w_mut,w_out,w_els,w_nd,w_sv,w_unsure,w_nu,w_TK,w_SC,w_AE,\n"
    "w_MAXD=1000;\n"
    "var w_NFC={button:1,link:1,heading:1,cell:1,gridcell:1,columnheader:1,rowheader:"
    "1,checkbox:1,\n"
    "radio:1,\"switch\":1,tab:1,option:1,MenuListOption:1,menuitem:1,menuitemcheckbox:1"
    ",\n"
    "menuitemradio:1,tooltip:1,ToggleButton:1,PopUpButton:1,DisclosureTriangle:1,tree"
    "item:1};\n"
    "var w_TAG={A:\"link\",ABBR:\"Abbr\",ADDRESS:\"group\",ARTICLE:\"article\",ASIDE:\"complem"
    "entary\",\n"
    "AUDIO:\"Audio\",B:\"generic\",BLOCKQUOTE:\"blockquote\",BODY:\"generic\",BR:\"LineBreak\",\n"
    "BUTTON:\"button\",CANVAS:\"Canvas\",CAPTION:\"caption\",CODE:\"code\",DD:\"definition\",\n"
    "DEL:\"deletion\",DETAILS:\"group\",DFN:\"term\",DIALOG:\"dialog\",DIV:\"generic\",\n"
    "DL:\"DescriptionList\",DT:\"term\",EM:\"emphasis\",FIELDSET:\"group\",FIGCAPTION:\"Figure"
    "Caption\",\n"
    "FIGURE:\"figure\",FOOTER:\"contentinfo\",FORM:\"form\",H1:\"heading\",H2:\"heading\",H3:\"h"
    "eading\",\n"
    "H4:\"heading\",H5:\"heading\",H6:\"heading\",HEADER:\"banner\",HR:\"separator\",I:\"generic"
    "\",\n"
    "IFRAME:\"Iframe\",IMG:\"image\",INS:\"insertion\",LABEL:\"LabelText\",LEGEND:\"Legend\",\n"
    "LI:\"listitem\",MAIN:\"main\",MARK:\"mark\",MENU:\"list\",METER:\"meter\",NAV:\"navigation\""
    ",\n"
    "OL:\"list\",OPTGROUP:\"group\",OUTPUT:\"status\",P:\"paragraph\",PRE:\"generic\",\n"
    "PROGRESS:\"progressbar\",Q:\"generic\",S:\"deletion\",SEARCH:\"search\",SECTION:\"section"
    "\",\n"
    "SMALL:\"generic\",SPAN:\"generic\",STRONG:\"strong\",SUB:\"subscript\",SUMMARY:\"Disclosu"
    "reTriangle\",\n"
    "SUP:\"superscript\",SVG:\"SvgRoot\",TABLE:\"table\",TBODY:\"rowgroup\",TD:\"cell\",\n"
    "TEXTAREA:\"textbox\",TFOOT:\"rowgroup\",THEAD:\"rowgroup\",TIME:\"time\",TR:\"row\",U:\"gen"
    "eric\",\n"
    "UL:\"list\",VIDEO:\"Video\"};\n"
    "var w_SKIP={SCRIPT:1,STYLE:1,TEMPLATE:1,NOSCRIPT:1,HEAD:1,TITLE:1,META:1,LINK:1,"
    "BASE:1,\n"
    "DATALIST:1,PARAM:1,SOURCE:1,TRACK:1,style:1,script:1,title:1,desc:1,defs:1,metadata:1"
    "};\n"
    "var w_INPUT={button:\"button\",submit:\"button\",reset:\"button\",image:\"button\",check"
    "box:\"checkbox\",\n"
    "radio:\"radio\",range:\"slider\",number:\"spinbutton\",search:\"searchbox\",color:\"Color"
    "Well\",\n"
    "date:\"date\",time:\"InputTime\",\"datetime-local\":\"DateTime\",month:\"DateTime\",week:\""
    "DateTime\",\n"
    "file:\"button\"};\n"
    "function w_st(e,r){var f=\"\",a;\n"
    "a=w_attr(e,\"aria-checked\");if(r===\"checkbox\"||r===\"radio\"||r===\"switch\"||r===\"me"
    "nuitemcheckbox\"||r===\"menuitemradio\"){\n"
    "if(e.tagName===\"INPUT\"){if(e.indeterminate)f+=\"m\";else if(e.checked)f+=\"c\";else "
    "f+=\"0\";}\n"
    "else if(a===\"mixed\")f+=\"m\";else if(a===\"true\")f+=\"c\";else f+=\"0\";}\n"
    "a=w_attr(e,\"aria-pressed\");if(a===\"true\")f+=\"p\";else if(a===\"mixed\")f+=\"m\";\n"
    "a=w_attr(e,\"aria-expanded\");if(a===\"true\")f+=\"x\";else if(a===\"false\")f+=\"o\";\n"
    "if(e.tagName===\"SUMMARY\"&&e.parentElement&&e.parentElement.tagName===\"DETAILS\")f"
    "+=e.parentElement.open?\"x\":\"o\";\n"
    "if(r===\"combobox\"&&e.tagName===\"SELECT\"&&f.indexOf(\"x\")<0&&f.indexOf(\"o\")<0)f+=\""
    "o\";\n"
    "if((e.tagName===\"OPTION\"&&e.selected)||w_attr(e,\"aria-selected\")===\"true\")f+=\"s\""
    ";\n"
    "var ds=e.matches(\":disabled\");\n"
    "if(ds&&e.tagName!==\"FIELDSET\"||w_attr(e,\"aria-disabled\")===\"true\")f+=\"d\";\n"
    "if(e.required||w_attr(e,\"aria-required\")===\"true\")f+=\"r\";\n"
    "if(w_attr(e,\"aria-readonly\")===\"true\"||e.readOnly&&(e.tagName===\"INPUT\"||e.tagNa"
    "me===\"TEXTAREA\"))f+=\"R\";\n"
    "if(e.tabIndex>=0&&!ds&&(e.hasAttribute(\"tabindex\")||e.matche"
    "s(\"a[href],button,input,select,textarea,summary,[contenteditable]\")))f+=\"f\";\n"
    "if(e.isContentEditable&&!(e.parentElement&&e.parentElement.isContentEditable))f+"
    "=\"e\";\n"
    "if(e===w_AE&&e!==document.body)f+=\"F\";\n"
    "if(w_attr(e,\"aria-invalid\")&&w_attr(e,\"aria-invalid\")!==\"false\")f+=\"i\";\n"
    "return f;}\n"
    "function w_rec(d,r,f,lv,nm,val,id){w_out.push(d+\"\\t\"+r+\"\\t\"+f+\"\\t\"+lv+\"\\t\"+(nm"
    "===null?\"\":\"=\"+w_cl(nm))+\"\\t\"+(val===null?\"\":val)+\"\\t\"+(id||\"\"));}\n"
    "function w_id(e){var i=w_W.ids.get(e);if(!i){i=++w_W.nid;w_W.ids.set(e,i);w_W.by.set(i,"
    "new WeakRef(e));}return i;}\n"
    "function w_level(e){var a=w_attr(e,\"aria-level\");if(a&&+a>=1&&+a<=9)return +a;va"
    "r m=/^H([1-6])$/.exec(e.tagName);return m?+m[1]:2;}\n";

const char snap_js_walk_def2[] =
    "function w_cl(s){return String(s).replace(/[\\u0000-\\u001f\\u007f]/g,\" \");}\n"
    "function w_sq(s){return w_cl(s).replace(/ +/g,\" \");}\n"
    "function w_trim(s){return w_sq(s).replace(/^ | $/g,\"\");}\n"
    "function w_attr(e,k){var v=e.getAttribute(k);return v===null?null:v;}\n"
    "function w_cs(e){var c=w_SC.get(e);if(c)return c;var s=w_g.getComputedStyle(e);\n"
    "c={display:s.display,visibility:s.visibility,s:s};w_SC.set(e,c);return c;}\n"
    "function w_hid(e){if(e.nodeType!==1)return false;if(w_attr(e,\"aria-hidden\")===\"t"
    "rue\"||e.hasAttribute(\"inert\"))return true;\n"
    "var s=w_cs(e);return s.display===\"none\"||s.visibility===\"hidden\"||s.visibility=="
    "=\"collapse\";}\n"
    "var w_seck=" SNAP_JS_SECRET_KIND ";\n"
    "function w_secret(e){var k=w_seck(e);if(k){\n"
    "if(!w_W.sec.has(e))w_W.secl.push(new WeakRef(e));w_W.sec.add(e);\n"
    "w_W.sk.set(e,(w_W.sk.get(e)|0)|k);}return k>0||w_W.sec.has(e);}\n"
    "function w_inSel(e){for(var p=e.parentElement;p;p=p.parentElement)if(p.tagName=="
    "=\"SELECT\")return p;return null;}\n"
    "function w_scoped(e){for(var p=e.parentElement;p;p=p.parentElement){var t=p.tagN"
    "ame;\n"
    "if(t===\"ARTICLE\"||t===\"ASIDE\"||t===\"MAIN\"||t===\"NAV\"||t===\"SECTION\")return true;"
    "}return false;}\n"
    "function w_role(e){var r=w_attr(e,\"role\");\n"
    "if(r){r=r.trim().split(/\\s+/)[0].toLowerCase();\n"
    "if((r===\"none\"||r===\"presentation\")&&(e.tabIndex>=0&&e.hasAttribute(\"tabindex\")|"
    "|w_attr(e,\"aria-label\")))r=\"\";\n"
    "else if(r===\"none\"||r===\"presentation\")return \"none\";\n"
    "else if(r===\"heading\"||r===\"img\"){return r===\"img\"?\"image\":r;}\n"
    "else if(r)return r;}\n"
    "var t=e.tagName;\n"
    "if(t===\"A\")return e.hasAttribute(\"href\")?\"link\":\"generic\";\n"
    "if(t===\"INPUT\"){var ty=(w_attr(e,\"type\")||\"text\").toLowerCase();if(ty===\"hidden\""
    ")return \"\";\n"
    "if(w_INPUT[ty])return w_INPUT[ty];return e.hasAttribute(\"list\")?\"combobox\":\"text"
    "box\";}\n"
    "if(t===\"SELECT\")return e.multiple||e.size>1?\"listbox\":\"combobox\";\n"
    "if(t===\"OPTION\")return w_inSel(e)&&!(w_inSel(e).multiple||w_inSel(e).size>1)?\"Me"
    "nuListOption\":\"option\";\n"
    "if(t===\"IMG\")return w_attr(e,\"alt\")===\"\"?\"none\":\"image\";\n"
    "if(t===\"HEADER\")return w_scoped(e)?\"sectionheader\":\"banner\";\n"
    "if(t===\"FOOTER\")return w_scoped(e)?\"sectionfooter\":\"contentinfo\";\n"
    "if(t===\"SECTION\")return (w_attr(e,\"aria-label\")||w_attr(e,\"aria-labelledby\"))?\"r"
    "egion\":\"section\";\n"
    "if(t===\"TH\"){var sc=(w_attr(e,\"scope\")||\"\").toLowerCase();return sc===\"row\"?\"row"
    "header\":\"columnheader\";}\n"
    "if(t===\"TABLE\"||t===\"TR\"||t===\"TD\"){var tb=t===\"TABLE\"?e:e.closest(\"table\");"
    "if(tb&&!w_data(tb))return t===\"TABLE\"?\"LayoutTable\":t===\"TR\"?\"LayoutTableRow\":\""
    "LayoutTableCell\";}\n"
    "return w_TAG[t]||\"generic\";}\n"
    "function w_labelsOf(e){var L=e.labels,s=[];if(!L)return \"\";for(var i=0;i<L.lengt"
    "h;i++)s.push(w_txt(L[i],{},true,e));return s.join(\" \");}\n"
    "function w_byIds(e,v,seen){var ids=v.trim().split(/\\s+/),s=[],r=e.getRootNode();\n"
    "for(var i=0;i<ids.length;i++){var x=r.getElementById?r.getElementById(ids[i]):do"
    "cument.getElementById(ids[i]);\n"
    "if(!x){w_nu=1;continue;}s.push(w_txt(x,seen,true,null,true));}return w_trim("
    "s.join(\" \"));}\n"
    "function w_ctlVal(e,r){var c=r===\"textbox\"||r===\"searchbox\"||r===\"combobox\"||"
    "r===\"slider\"||r===\"spinbutton\";if(!c)return null;if(w_secret(e))return w_secv(e);\n"
    "if(e.tagName===\"SELECT\"){var o=e.options[e.selectedIndex];return o?w_trim(o.lab"
    "el||o.textContent):\"\";}\n"
    "if(r===\"combobox\"&&e.tagName!==\"INPUT\"&&e.tagName!==\"TEXTAREA\")return w_trim"
    "(e.textContent);return typeof e.value===\"string\"?e.value:\"\";}\n";

const char snap_js_walk_def3[] =
    "function w_txt(e,seen,w_rec,skipCtl,ref,kr){\n"
    "if(e.nodeType===3)return w_sq(e.data);if(e.nodeType!==1)return \"\";\n"
    "if(seen.__n>2000)return \"\";seen.__n=(seen.__n||0)+1;\n"
    "if(!ref&&!kr&&w_hid(e))return \"\";\n"
    "if(e===skipCtl)return \"\";\n"
    "var r=kr||w_role(e),lb=w_attr(e,\"aria-labelledby\");\n"
    "if(lb&&!seen.__lb){seen.__lb=1;var s1=w_byIds(e,lb,seen);seen.__lb=0;if(s1)retur"
    "n s1;}\n"
    "var al=w_attr(e,\"aria-label\");if(al&&al.trim())return w_trim(al);\n"
    "if(w_rec){var v=w_ctlVal(e,r);if(v!==null&&e!==skipCtl&&(v!==\"\"||!ref))return v;}\n"
    "var n=w_native(e,r,seen);if(n)return n;\n"
    "if(w_rec||w_NFC[r]){if(w_secret(e))return /\\S/.test(e.textContent)?\"[secret]\":\"\";\n"
    "var c=w_content(e,seen,skipCtl);if(c)return c;}\n"
    "var ti=w_attr(e,\"title\");return ti&&(!w_rec||ref)?w_trim(ti):\"\";}\n"
    "function w_native(e,r,seen){var t=e.tagName;\n"
    "if(t===\"INPUT\"){var ty=(w_attr(e,\"type\")||\"text\").toLowerCase();\n"
    "if(ty===\"submit\"||ty===\"reset\"||ty===\"button\")return w_trim(e.hasAttribute(\"valu"
    "e\")?w_attr(e,\"value\"):ty===\"submit\"?\"Submit\":ty===\"reset\"?\"Reset\":\"\");\n"
    "if(ty===\"image\")return w_trim(w_attr(e,\"alt\")||w_attr(e,\"value\")||\"Submit\");\n"
    "var l=w_trim(w_labelsOf(e));if(l)return l;var ti=w_attr(e,\"title\");if(ti&&ti.tri"
    "m())return w_trim(ti);\n"
    "var ph=w_attr(e,\"placeholder\");return ph?w_trim(ph):\"\";}\n"
    "if(t===\"TEXTAREA\"||t===\"SELECT\"){var l2=w_trim(w_labelsOf(e));if(l2)return l2;va"
    "r t2=w_attr(e,\"title\");if(t2&&t2.trim())return w_trim(t2);\n"
    "var p2=w_attr(e,\"placeholder\");return p2&&t===\"TEXTAREA\"?w_trim(p2):\"\";}\n"
    "if(t===\"BUTTON\"||t===\"METER\"||t===\"OUTPUT\"||t===\"PROGRESS\")\n"
    "return w_trim(w_labelsOf(e));\n"
    "if(t===\"IMG\"){var a=w_attr(e,\"alt\");return a?w_trim(a):\"\";}\n"
    "if(t===\"FIELDSET\"){for(var c=e.firstElementChild;c;c=c.nextElementSibling)if(c.t"
    "agName===\"LEGEND\")return w_trim(w_content(c,seen));return \"\";}\n"
    "if(t===\"TABLE\"){var cp=e.caption;return cp?w_trim(w_content(cp,seen)):\"\";}\n"
    "if(t===\"FIGURE\"){for(var f=e.firstElementChild;f;f=f.nextElementSibling)if(f.tag"
    "Name===\"FIGCAPTION\")return w_trim(w_content(f,seen));return \"\";}\n"
    "if(t===\"OPTION\")return w_trim(e.label||e.textContent);\n"
    "return \"\";}\n"
    "function w_data(t){var k=w_TK.get(t);if(k===undefined){k=!!(t.hasAttribute(\"role\""
    ")||t.caption||t.tHead||t.tFoot||t.rows.length>=20||t.querySelector(\"th,col\"));w_TK"
    ".set(t,k);}return k;}\n"
    "function w_closed(e){if(e.shadowRoot||e.tagName.indexOf(\"-\")<1)return false;\n"
    "for(var k=e.firstChild;k;k=k.nextSibling){if(k.nodeType===1){var d=w_cs(k).display;\n"
    "if(d===\"none\"||d===\"contents\"||w_SKIP[k.tagName])continue;\n"
    "return !k.getClientRects().length;}\n"
    "if(k.nodeType===3&&k.data.trim()){var g=document.createRange();g.selectNodeContents(k);\n"
    "return !g.getClientRects().length;}}\n"
    "var b=e.getBoundingClientRect();return b.width>0&&b.height>0;}\n"
    "function w_kids(e){if(e.shadowRoot)return e.shadowRoot.childNodes;\n"
    "if(e.tagName===\"SLOT\"){var a=e.assignedNodes();if(a.length)return a;}return e.ch"
    "ildNodes;}\n"
    "function w_content(e,seen,skipCtl){var s=\"\";var K=w_kids(e);\n"
    "for(var i=0;i<K.length;i++){var k=K[i];if(k.nodeName===\"WBR\"){s+=\" \";continue;}\n"
    "var x=w_txt(k,seen,true,skipCtl);if(!x)continue;\n"
    "var dp=k.nodeType===1?w_cs(k).display:\"inline\",blk=dp!==\"inline\"&&dp!==\"contents\";\n"
    "s+=blk?\" \"+x+\" \":x;}\n"
    "return w_trim(s);}\n";

/* Secret values (observe_build.c's snap_obs_mask_secrets, in the page):
 * w_secv(e) notes the value of secret field e (a select's: its option's
 * label) in w_sv and gives "[secret]" for it (nothing for a blank value;
 * bullets or asterisks as they are); w_mask(s,V) replaces every value of
 * V in s by "[secret]" (the longest at each place; one under 3 bytes of
 * UTF-8 only as a whole word, as in C); w_maskl masks a record's name and
 * text value. */
const char snap_js_walk_def4[] =
    "function w_secv(e){var v=\"\";if(e.tagName===\"SELECT\"){var o=e.options[e.selectedIndex];\n"
    "v=o?w_trim(o.label||o.textContent):\"\";}else if(typeof e.value===\"string\")v=e.value;\n"
    "else if(e.isContentEditable)v=e.textContent;\n"
    "if(!/[^ \\t\\n\\r\\f]/.test(v))return \"\";if(/^[\\u2022\\u25cf*]+$/.test(v))return v;\n"
    "if(w_sv.indexOf(v)<0)w_sv.push(v);return \"[secret]\";}\n"
    "function w_wc(c){return c!==\"\"&&(c>\"\\x7f\"||/[A-Za-z0-9]/.test(c));}\n"
    "function w_u8(v){var n=0;for(var i=0;i<v.length;i++){var c=v.charCodeAt(i);\n"
    "n+=c<128?1:c<2048?2:c>=55296&&c<57344?2:3;}return n;}\n"
    "function w_mask(s,V){var o=\"\",i=0;while(i<s.length){var b=0;\n"
    "for(var k=0;k<V.length;k++){var v=V[k],l=v.length;if(l>b&&s.startsWith(v,i)&&(w_u8(v)>=3||\n"
    "(i===0||!w_wc(s[i-1]))&&!w_wc(s.charAt(i+l))))b=l;}\n"
    "if(b){o+=\"[secret]\";i+=b;}else o+=s[i++];}return o;}\n"
    "function w_maskl(l){var f=l.split(\"\\t\");if(f[4])f[4]=\"=\"+w_mask(f[4].slice(1),w_sv);\n"
    "if(f[5]&&f[5][0]===\"=\")f[5]=\"=\"+w_mask(f[5].slice(1),w_sv);return f.join(\"\\t\");}\n";

const char snap_js_walk_expr[] =
    "(function(){\n"
    "function w_walk(p,d){if(w_unsure)return;var K=w_kids(p);\n"
    "for(var i=0;i<K.length;i++){var n=K[i];\n"
    "if(p.tagName===\"DETAILS\"&&!p.open&&n!==p.querySelector(\":scope>summary\"))continue;\n"
    "if(n.nodeType===3){var s=w_sq(n.data),pe=n.parentElement;if(pe&&w_cs(pe).visibility!"
    "==\"visible\")continue;if(s.trim()){if(pe&"
    "&w_cs(pe).s.whiteSpace.indexOf(\"pre\")===0)s=w_cl(n.data);\n"
    "w_els.push(n);w_rec(d,\"StaticText\",\"\",0,s,null,w_id(n));}continue;}\n"
    "if(n.nodeType!==1||w_SKIP[n.tagName])continue;\n"
    "if(w_attr(n,\"aria-hidden\")===\"true\"||n.hasAttribute(\"inert\"))continue;\n"
    "var c=w_cs(n);if(c.display===\"none\"){w_nd.push(n);continue;}\n"
    "if(w_closed(n)){w_unsure=1;return;}\n"
    "if(c.visibility===\"hidden\"||c.visibility===\"collapse\"||c.display===\"contents\"&&!"
    "w_attr(n,\"role\")){w_walk(n,d);continue;}\n"
    "if(d>=w_MAXD){w_unsure=1;continue;}\n"
    "var r=w_role(n);if(!r)continue;\n"
    "if(r===\"generic\"&&c.display===\"inline\"&&!n.hasAttribute(\"contenteditable\")&&!n."
    "hasAttribute(\"tabindex\")&&!w_at"
    "tr(n,\"aria-label\")&&!w_attr(n,\"title\")&&!n.shadowRoot){w_walk(n,d);continue;}\n"
    "var nu=0;if(n.tagName.indexOf(\"-\")>0&&!w_attr(n,\"role\")&&n.tabIndex>=0&&\n"
    "n.hasAttribute(\"tabindex\"))nu=1;\n"
    "var f=w_st(n,r),nm=null,val=null,sec=false;\n"
    "if(r===\"generic\"&&c.display===\"inline\")f+=\"n\";\n"
    "var seen={};w_nu=0;var x=w_txt(n,seen,false,null,false,r);if(x)nm=x;if(w_nu)nu=1;\n"
    "if(nm&&nm.length>150&&!w_NFC[r])nu=1;if(nu)f+=\"u\";\n"
    "if(r===\"textbox\"||r===\"searchbox\"||r===\"combobox\"||r===\"slider\"||r===\"spinbutton"
    "\"||f.indexOf(\"e\")>=0){sec=w_secret(n);\n"
    "if(sec){f+=\"z\";w_secv(n);}\n"
    "else{var v=w_ctlVal(n,r);if(v!==null&&v!==\"\"){val=(r===\"slider\"||r"
    "===\"spinbutton\")&&v.trim()!==\"\"&&isFinite(+v)?\"#\"+(+v):\"=\"+w_cl(v);}}}\n"
    "if(n.tagName===\"INPUT\"&&n.type===\"file\"){var fl=n.files;val=\"=\"+w_cl(fl&&fl.len"
    "gth?fl.length===1?fl[0].name:fl.length+\" files\":\"No file chosen\");}\n"
    "if(f.indexOf(\"e\")>=0&&!sec)val=\"=\"+w_cl(n.textContent);\n"
    "w_els.push(n);w_rec(d,r,f,r===\"heading\"?w_level(n):0,nm,val,w_id(n));\n"
    "if(n.tagName===\"SELECT\"&&r===\"combobox\"){var o=n.options;w_rec(d+1,\"MenuListPopu"
    "p\",\"\",0,null,nul"
    "l);w_els.push(n);\n"
    "for(var j=0;j<o.length;j++){w_els.push(o[j]);w_rec(d+2,w_role(o[j]),w_st(o[j],\"o"
    "ption\"),0,sec&&o[j].selected?\"[secret]\":w_trim(o[j].label||o[j].textContent),null,\n"
    "w_id(o[j]));}continue;}\n"
    "if(sec)continue;\n"
    "if(r===\"textbox\"||r===\"searchbox\"||r===\"spinbutton\"||n.tagName===\"IMG\"||n.tagNam"
    "e===\"IFRAME\")continue;\n"
    "w_walk(n,d+1);}}\n"
    "w_W=w_g.__cdpgateWalk;\n"
    "if(!w_W||w_W.d!==document||!w_W.secl){w_W={d:document,sec:new WeakSet(),els:[],ids:"
    "new WeakMap(),by:new Map(),nid:0,sk:new WeakMap(),secl:[]};w_g.__cdpgateWalk=w_W;}\n"
    "if(w_W.by.size>100000)w_W.by.forEach(function(v,k){if(!v.deref())w_W.by.delete(k);});\n"
    "w_M=w_g.__cdpgateMut;w_mut=w_M&&w_M.d===document?w_M.n:-1;\n"
    "w_out=[];w_els=[];w_nd=[];w_sv=[];w_unsure=0;w_TK=new WeakMap();w_SC=new Map();\n"
    "w_AE=document.activeElement;\n"
    "var root=document.documentElement;w_els.push(document);\n"
    "w_rec(0,\"RootWebArea\",\"\",0,document.title?w_trim(document.title):null,null);\n"
    "if(root&&document.body)w_walk(document.body,1);\n"
    "if(w_sv.length)w_out=w_out.map(w_maskl);\n"
    "w_W.els=w_els;w_W.nd=w_nd;w_W.sv=w_sv;w_W.bkFor=null;w_W.mut=w_mut;\n"
    "var o=\"W1\\t\"+w_mut+\"\\t\"+(w_unsure?\"u\":\"\")+\"\\n\"+w_out.join(\"\\n\"),q=[],i=0,j;\n"
    "w_out=null;while(i<o.length){j=Math.min(i+85000,o.length);\n"
    "if(j<o.length&&o.charCodeAt(j-1)>=0xd800&&o.charCodeAt(j-1)<0xdc00)j--;\n"
    "q.push(o.slice(i,j));i=j;}\n"
    "w_W.pq=q.slice(1);return (q.length-1)+\"\\n\"+(q[0]||\"\");})()\n";

/* The next piece of the walk's output (snap_js_walk_expr kept the pieces
 * after the first in __cdpgateWalk.pq): each call takes one, in order; an
 * exception when none is left, so a short read is never taken for the
 * end of the output. Runs: Runtime.evaluate in cdpgate's isolated world
 * of the walked frame, by value, once per piece (observe_walk.c). */
const char snap_js_walk_next_expr[] =
    "(function(){var W=globalThis.__cdpgateWalk,q=W&&W.d===document&&W.pq;"
    "if(!q||!q.length)throw new Error(\"no piece\");return q.shift();})()";

/* A walker ref (agent_refs.c): the element the walker gave id i in this
 * document, while it is still in it; null when the document is another,
 * the element was collected, or it is out of the document (stale).
 * Runs: Runtime.callFunctionOn in cdpgate's isolated world of the ref's
 * frame (executionContextId, the id as an argument), not by value: the
 * caller takes the element's objectId. */
const char snap_js_walk_ref_fn[] =
    "function(i){var W=globalThis.__cdpgateWalk,r=W&&W.d===document&&W.by&&W.by.get(i),"
    "e=r&&r.deref();return e&&e.isConnected&&e.ownerDocument===document?e:null;}";

/* The SNAP_SECRET_* kinds the walker ever saw on the element of walker id
 * i in this document (0: never secret, or no such element).
 * Runs: Runtime.callFunctionOn in cdpgate's isolated world of the ref's
 * frame (executionContextId, the id as an argument), by value. */
const char snap_js_walk_sec_fn[] =
    "function(i){var W=globalThis.__cdpgateWalk,r=W&&W.d===document&&W.by&&W.by.get(i),"
    "e=r&&r.deref();return e&&W.sk?W.sk.get(e)|0:0;}";

/* The walker's per-node fallback (observe_walk.c): may the names the
 * browser's AX tree gives the records the walker was unsure of be shown?
 * Not when one holds the value of a secret field (SNAP_JS_SECRET_KIND,
 * on any element in the document or an open shadow root, hidden or not)
 * or of a field the walker ever saw secret (__cdpgateWalk.secl): the AX
 * name of an element labelled by such a field may carry its value, which
 * the walker never prints. White space runs compared as one space.
 * Runs: Runtime.callFunctionOn in cdpgate's isolated world of the frame,
 * the names (an array of strings) as the argument, by value. Returns:
 * true when a name holds such a value (the caller reads the whole AX
 * tree, which masks it), false otherwise. */
const char snap_js_walk_leak_fn[] =
    "function(names){var W=globalThis.__cdpgateWalk,v=[];\n"
    "function sq(s){return String(s).replace(/\\s+/g,\" \").trim();}\n"
    "function add(e){if(!e)return;var x=[];if(typeof e.value===\"string\")x.push(e.value);\n"
    "if(e.tagName===\"SELECT\")for(var i=0;i<e.options.length;i++)if(e.options[i].selected)\n"
    "x.push(e.options[i].label,e.options[i].textContent);\n"
    "if(e.isContentEditable)x.push(e.textContent);\n"
    "x.forEach(function(s){s=sq(s);if(s)v.push(s);});}\n"
    "if(W&&W.d===document&&W.secl)W.secl.forEach(function(r){add(r.deref());});\n"
    "var sec=" SNAP_JS_SECRET_KIND ";\n"
    "function sc(r){var w=document.createTreeWalker(r,1),e;\n"
    "while((e=w.nextNode())){if(e.shadowRoot)sc(e.shadowRoot);if(sec(e))add(e);}}\n"
    "sc(document);\n"
    "for(var i=0;i<names.length;i++){var n=sq(names[i]);\n"
    "for(var j=0;j<v.length;j++)if(n.indexOf(v[j])>=0)return true;}\n"
    "return false;}";
/* The walker's id for an element (an AX ref's, for a view from it on a
 * walker view: snap_ref_node_as); 0 when the walk gave it none.
 * Runs: Runtime.callFunctionOn on the element resolved in cdpgate's
 * isolated world, by value. */
const char snap_js_walk_id_fn[] =
    "function(){var W=globalThis.__cdpgateWalk;\n"
    "return W&&W.d===document&&W.ids&&W.ids.get(this)||0;}";

/* A walker ref's AX name masked as the walk masked its view (w_mask with
 * the secret values the last walk noted, __cdpgateWalk.sv), so that it
 * compares with the walker's name (agent_refs.c walker_resolve); null when
 * the document is another or no walk noted any.
 * Runs: Runtime.callFunctionOn in cdpgate's isolated world of the ref's
 * frame (executionContextId, the AX name as an argument), by value. */
const char snap_js_walk_mask_fn[] =
    "function(s){var W=globalThis.__cdpgateWalk;return W&&W.d===document&&W.sv&&W.sv.length&&"
    "typeof w_mask===\"function\"?w_mask(String(s),W.sv):null;}";

/* The secret values the last walk noted (__cdpgateWalk.sv, at most 64),
 * for observe_walk.c to remember as keyed hashes (snap_secval_note: red
 * team s13, W7); [] when the document is another. The values stay in
 * the world only until the next walk (w_sv is made anew each walk).
 * Runs: Runtime.evaluate in cdpgate's isolated world of the walked frame,
 * by value, as a secret call (snap_cdp_call_secret: the reply is wiped). */
const char snap_js_walk_sv_expr[] =
    "(function(){var W=globalThis.__cdpgateWalk;"
    "return W&&W.d===document&&W.sv?W.sv.slice(0,64):[];})()";

/* The values of the secret fields of the document (the one rule,
 * SNAP_JS_SECRET_KIND, on every element of it and of its open shadow
 * roots, and the fields the walker ever saw secret: __cdpgateWalk.secl),
 * at most 64: on the AX path, whose tree shows a password's value as
 * bullets, for observe_walk.c to remember them as keyed hashes
 * (snap_secval_note: red team s13, W7). Blank and bullet-only values are
 * left out. Runs: Runtime.evaluate in cdpgate's isolated world of the
 * frame, by value, as a secret call (snap_cdp_call_secret: the reply is
 * wiped). */
const char snap_js_secret_values_expr[] =
    "(function(){var W=globalThis.__cdpgateWalk,v=[],sec=" SNAP_JS_SECRET_KIND ";\n"
    "function add(e){if(!e||v.length>=64)return;var s=typeof e.value===\"string\"?e.value:\n"
    "e.isContentEditable?e.textContent:\"\";\n"
    "if(/\\S/.test(s)&&!/^[\\u2022\\u25cf*]+$/.test(s)&&v.indexOf(s)<0)v.push(s);}\n"
    "if(W&&W.d===document&&W.secl)W.secl.forEach(function(r){add(r.deref());});\n"
    "function sc(r){var w=document.createTreeWalker(r,1),e;\n"
    "while((e=w.nextNode())){if(e.shadowRoot)sc(e.shadowRoot);if(sec(e))add(e);}}\n"
    "sc(document);return v;})()";

/* The rows of the page each node of the last walk covers, for a view from
 * the viewport (observe_view.c snap_obs_walk_boxes): one line "id y0 y1"
 * (document coordinates: the bounding box plus the scroll), "id f" (fixed
 * or sticky, or inside such an element: always in view) or "id -" (no
 * layout box: display:contents) per node with an id, after a first line
 * "1" when the layout is not the walk's (a node that had a box at the
 * first read has none now or the reverse, or content hidden by
 * display:none at the walk is shown: the caller walks again), else "0".
 * "" when no walk of this document is kept.
 * Runs: Runtime.evaluate in cdpgate's isolated world of the main frame. */
const char snap_js_walk_box_expr[] =
    "(function(){var W=globalThis.__cdpgateWalk;if(!W||W.d!==document||!W.els||!W.nd)return \"\";\n"
    "var E=W.els,o=[],ch=0,FX=new Map(),sy=scrollY,g=document.createRange(),\n"
    "bk=W.bkFor===E?W.bk:null,nb=[];\n"
    "function up(e){return e.assignedSlot||e.parentElement||\n"
    "(e.parentNode&&e.parentNode.host)||null;}\n"
    "function fx(e){if(!e||e.nodeType!==1)return false;var v=FX.get(e);if(v!==undefined)return v;\n"
    "var p=getComputedStyle(e).position;v=p===\"fixed\"||p===\"sticky\"||fx(up(e));FX.set(e,v);\n"
    "return v;}\n"
    "for(var i=0;i<E.length;i++){var e=E[i],id=e&&W.ids.get(e);if(!id)continue;\n"
    "var t=e.nodeType===3,R;if(t){g.selectNodeContents(e);R=g.getClientRects();}\n"
    "else R=e.getClientRects();var has=R.length>0?1:0;\n"
    "if(bk&&bk[nb.length]!==has)ch=1;nb.push(has);\n"
    "if(!has){o.push(id+\" -\");continue;}if(fx(t?up(e):e)){o.push(id+\" f\");continue;}\n"
    "var b=t?g.getBoundingClientRect():e.getBoundingClientRect();\n"
    "o.push(id+\" \"+Math.floor(b.top+sy)+\" \"+Math.ceil(b.bottom+sy));}\n"
    "for(var j=0;j<W.nd.length;j++){var h=W.nd[j];\n"
    "if(h.isConnected&&getComputedStyle(h).display!==\"none\")ch=1;}\n"
    "if(!bk){W.bk=nb;W.bkFor=E;}return (ch?\"1\":\"0\")+\"\\n\"+o.join(\"\\n\");})()";
