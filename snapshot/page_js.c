/*
 * page_js.c — every JavaScript snippet cdpgate runs in a page, in one place.
 *
 * The sink (sink.c) refuses any Runtime.evaluate or Runtime.callFunctionOn
 * whose script is not in snap_page_scripts below (a template: its prefix and
 * suffix around one JSON value), and one that changes the page (SNAP_JS_WRITE)
 * without a permit. The one exception is the eval tool, whose expression the
 * grant names and the human confirms (policy.c). cdpgate adds no script to
 * new documents (no Page.addScriptToEvaluateOnNewDocument).
 *
 * Each script says what it does, where it runs and what it returns:
 *   - "on a node": Runtime.callFunctionOn on a remote object of the element
 *     (this = the node), in cdpgate's isolated world of the node's frame
 *     (snap_frame_world: Page.createIsolatedWorld, one per frame and
 *     document). Every node is resolved into that world (DOM.resolveNode
 *     with its executionContextId: snap_ref_resolve, the hit node of the
 *     click point, the fields noted secret), and so is every node passed
 *     as an argument, or returned by reference: a function takes objects
 *     of its own world only. There the prototypes and builtins the script
 *     calls (closest, parentNode, value, innerText, trim, ...) are the
 *     browser's own, not what the page's scripts redefined in the main
 *     world, so the page cannot fake the gate's facts or the actionability
 *     checks through its JavaScript. What the page's DOM really holds (a
 *     label whose text lies) is still what it holds. Events a script
 *     dispatches and the focus it moves reach the page's own handlers from
 *     there as from anywhere (the DOM is shared; only the JS wrappers are
 *     per world);
 *   - "in the page": Runtime.evaluate in the page's main world (the frame's
 *     default context), or in cdpgate's isolated world where said (with
 *     contextId: what the gate or a check relies on).
 * Every reply is read with returnByValue unless said: plain JSON values. A
 * page can lie to its scripts only about itself: identities (tab, frame,
 * document, node) come from CDP, never from a script.
 */
#include "snapshot/snap_int.h"
#include "snapshot/page_js.h"

/* ==== the actions (act_*.c) ==== */

/* A run of whitespace in text shown to the model (JS regex source): what
 * JavaScript's \s matches, less U+2028, U+2029 and U+FEFF, which the model
 * is shown escaped (gate_char_escape), never folded into a space. */
#define SHOWN_WS "/[\\t-\\r \\u00a0\\u1680\\u2000-\\u200a\\u202f\\u205f\\u3000]+/g"
/* ... and trimmed once collapsed (trim() would drop those three too). */
#define SHOWN_TRIM ".replace(/^ | $/g,'')"

/* Page-check helper (JS source, a var statement): sfOf(e) is the names of
 * the password and one-time-code inputs of e's form (or of e itself when
 * it is one), or null.
 * Runs: inside the scripts below that start with it (not on its own). */
#define SF_SRC \
    "var sfOf=function(e){var f=e&&(e.form||(e.closest&&e.closest('form')));" \
    "var L=f?[].slice.call(f instanceof HTMLFormElement?Object.getOwnPropertyDescriptor(" \
    "HTMLFormElement.prototype,'elements').get.call(f):[]):e?[e]:[];" \
    "var s=L.filter(function(i){return i.tagName==='INPUT'&&((i.type||'').toLowerCase()===" \
    "'password'||/one-time-code|current-password|new-password/.test(" \
    "(i.getAttribute('autocomplete')||'').toLowerCase()));});" \
    "return s.length?s.slice(0,8).map(function(i){return String(i.name||'');}):null;};"

/* Page-check helper (JS source, a var statement): isSec(e) is true when e
 * is a secret field by the one secret-field rule (SNAP_JS_SECRET_KIND,
 * page_js.h; the same in the walker and, in C, in observe_dom.c).
 * Runs: inside the scripts below that start with it (not on its own). */
#define SEC_SRC "var isSec=function(e){return " SNAP_JS_SECRET_KIND "(e)>0;};"

/* Page-check helper (JS source, a var statement): fw(e) is "" when the
 * keys of the page go to e (the focused element, through open shadow
 * roots, is e, or, for a contenteditable, an editable element holding e or
 * inside it), else what has the focus ("input type=text", "a frame", "no
 * element"): tag and type only, never a value.
 * Runs: inside the scripts below that start with it (not on its own). */
#define FW_SRC \
    "var fw=function(e){var a=document.activeElement;" \
    "while(a&&a.shadowRoot&&a.shadowRoot.activeElement)a=a.shadowRoot.activeElement;" \
    "if(e&&a&&(a===e||(e.isContentEditable&&a.isContentEditable&&" \
    "(a.contains(e)||e.contains(a)))))return'';" \
    "return!a||a===document.body||a===document.documentElement?'no element':" \
    "a.tagName==='IFRAME'||a.tagName==='FRAME'?'a frame':a.tagName.toLowerCase()+" \
    "(a.tagName==='INPUT'?' type='+String(a.type).slice(0,20):'');};"

/* Where the keys go now, as fw() says ("" on the element).
 * Runs: on a node, the element typed into or pressed on (act_result.c).
 * Returns: a string, "" when the keys go to it. */
const char snap_js_focus_on_fn[] =
    "function(){" FW_SRC "var e=this.nodeType===1?this:this.parentElement;"
    "if(e&&e.tagName==='LABEL'&&e.control)e=e.control;return fw(e);}";

/* Give the element the focus (a key pressed on a replayed step's target,
 * snap_press_on; a label's control for a label).
 * Runs: on a node, under the press permit (act_input.c). Returns: nothing;
 * snap_js_focus_on_fn says where the keys go then. */
const char snap_js_focus_fn[] =
    "function(){var e=this.nodeType===1?this:this.parentElement;"
    "if(e&&e.tagName==='LABEL'&&e.control)e=e.control;if(e&&e.focus)e.focus();}";

/* Which of the fields noted secret in the element's document (tab,
 * frame_id; snap_secret_note) are the element or in its form: the page
 * may have made them type=text since, which sfOf() cannot see.
 * Runs: on a node, the element of the action; arguments: the fields noted
 * secret in its document (act_result.c). Returns: an array of their names
 * (at most 8), those that are the element or in its form. */
const char snap_js_sf_known_fn[] =
    "function(){var e=this.nodeType===1?this:this.parentElement;"
    "if(e&&e.tagName==='LABEL'&&e.control)e=e.control;"
    "var f=e&&(e.form||(e.closest&&e.closest('form'))),o=[];"
    "for(var i=0;i<arguments.length&&o.length<8;i++){var x=arguments[i];"
    "if(x&&x.nodeType===1&&(x===e||(f&&(x.form===f||Node.prototype.contains.call(f,x)))))"
    "o.push(String(x.name||'').slice(0,63));}return o;}";

/* Checks on the element before input (one call, plain values back).
 * Runs: on a node, the element before pointer input (act_locate.c).
 * Returns: {tag, id?, disabled, hidden?, option?, sf?} or {gone:1}. */
const char snap_js_state_fn[] =
    "function(){" SF_SRC "var e=this.nodeType===1?this:this.parentElement;"
    "if(!e)return{gone:1};"
    "var r={tag:e.tagName.toLowerCase()},d=null;if(e.id)r.id=String(e.id).slice(0,40);"
    "if(e.matches(':disabled'))d=e.hasAttribute('disabled')?'disabled':"
    "'inside a disabled fieldset';"
    "else{var b=e.parentElement&&e.parentElement.closest('button:disabled,select:disabled');"
    "if(b)d='inside a disabled '+b.tagName.toLowerCase();"
    "else{var c=e.closest('[aria-disabled=true]');"
    "if(c)d=c===e?'aria-disabled':'inside an aria-disabled element';"
    "else if(e.closest('[inert]'))d='inert (blocked by a modal)';}}"
    "r.disabled=d;var s=getComputedStyle(e);"
    "if(s.visibility!=='visible')r.hidden='visibility: '+s.visibility;"
    "else if(e.checkVisibility&&!e.checkVisibility())r.hidden='not rendered';"
    "if(r.tag==='option'&&e.closest('select'))r.option=1;"
    "var sf=sfOf(e);if(sf)r.sf=sf;return r;}";

/* Is the hit node (argument) the element, inside it, or its label? A hit
 * on a ::before/::after box (a CSSPseudoElement, not a Node: TodoMVC's
 * check mark is its checkbox's ::after) counts as its element. A text node
 * (a text target) takes a hit on itself or on the element it is directly
 * in, never on another element inside that one.
 * Runs: on a node, the element; argument: the node hit at the click point
 * (act_locate.c). Returns: 1 inside, 2 its label, 3 it labels the hit, 0 other. */
const char snap_js_contains_fn[] =
    "function(n){if(n&&n.nodeType===undefined&&n.element)n=n.element;"
    "for(var x=n;x;x=x.parentNode||x.host)if(x===this)return 1;"
    "if(this.nodeType===3)return n===this.parentElement?1:0;"
    "var e=n.nodeType===1?n:n.parentElement,l=e&&e.closest('label');"
    "if(l&&l.control===this)return 2;"
    "if(this.tagName==='LABEL'&&this.control&&this.control===e)return 3;return 0;}";

/* What covers the element (argument): the outermost ancestor of the hit
 * node that does not contain the element, an open modal if that has no
 * controls, and up to four visible controls in them, likely closers first.
 * Runs: on a node, the node hit at the click point; argument: the element
 * (act_locate.c). Returns: by reference, an array [cover, modal, controls...]. */
const char snap_js_cover_fn[] =
    "function(t){var h=this.nodeType===undefined&&this.element?this.element:this;"
    "var n=h.nodeType===1?h:h.parentElement;"
    "var up=function(x){return x.parentElement||(x.parentNode&&x.parentNode.host)||null;};"
    "var c=n;for(var p=up(c);p&&p!==document.body&&p!==document.documentElement&&"
    "!(t&&p.contains(t));p=up(p))c=p;"
    "var vis=function(x){var b=x.getBoundingClientRect();return b.width>0&&b.height>0&&"
    "getComputedStyle(x).visibility==='visible';};"
    "var S='button,a[href],[role=button],input[type=button],input[type=submit],[role=link]';"
    "var K=/close|dismiss|accept|agree|\\bok\\b|got it|no,? thanks|reject|decline|continue|"
    "allow|deny|\\u00d7|\\u2715|\\u2716|^x$/i;"
    "var nm=function(x){return((x.getAttribute('aria-label')||'')+' '+(x.textContent||'')+"
    "' '+(x.value||'')).trim();};"
    "var all=[].slice.call(c.querySelectorAll(S)).filter(vis),m=null;"
    "if(!all.length){m=document.querySelector('[aria-modal=true],dialog[open],"
    "[role=dialog],[role=alertdialog]');"
    "if(m&&m!==c&&vis(m))all=[].slice.call(m.querySelectorAll(S)).filter(vis);else m=null;}"
    "all.sort(function(x,y){return(K.test(nm(y))?1:0)-(K.test(nm(x))?1:0);});"
    "return[c,m].concat(all.slice(0,4));}";

/* Page-check helper (JS source, a var statement): vis(x) is true when
 * the element has a box, is not visibility:hidden and is not inside
 * aria-hidden=true (hidden from the accessibility tree the snapshot reads).
 * Runs: inside the recorder scripts below (not on its own). */
#define VIS_SRC \
    "var vis=function(x){return x.isConnected&&x.getClientRects().length>0&&" \
    "getComputedStyle(x).visibility!=='hidden'&&!(x.closest&&x.closest('[aria-hidden=true]'));};"

/* Page-check helper (JS source, a var statement): tx(x) is the text of the
 * node's text nodes (no script, style, noscript or template, in any case:
 * SVG and XHTML name them in lower case; nothing inside an element with
 * aria-hidden=true or the hidden attribute), joined by spaces: what a node held, readable also
 * once detached (innerText needs a box). Cut at 400.
 * Runs: inside the recorder scripts below (not on its own). */
#define TX_SRC \
    "var hx=function(p){return /^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE)$/i.test(p.nodeName)||" \
    "(p.nodeType===1&&(p.getAttribute('aria-hidden')==='true'||p.hasAttribute('hidden')));};" \
    "var tx=function(x){if(x.nodeType===3)return x.data.slice(0,400);" \
    "if(/^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE)$/i.test(x.nodeName))return'';var o=[],n=0," \
    "w=(x.ownerDocument||document).createTreeWalker(x,4,{acceptNode:function(t){" \
    "for(var p=t.parentNode;p&&p!==x;p=p.parentNode)if(hx(p))return 2;" \
    "return 1;}});for(var t=w.nextNode();t&&n<400;t=w.nextNode()){o.push(t.data);" \
    "n+=t.data.length;}return o.join(' ').slice(0,400);};"

/* Watch the element's document for what the action changes: text added or
 * changed, nodes removed (their text taken when the observer sees them:
 * detached nodes have no box), elements hidden or shown by their hidden,
 * class, style, aria-hidden or open attributes, the visible items of the
 * document's lists, and where the focus is. At most 200 nodes of each kind.
 * Also watched: the open shadow roots and same-origin frames found in the
 * first 5,000 elements (at most 32 roots; shadow roots of added elements
 * too), toggle/beforetoggle events (popovers, details), and a visibility
 * sample of up to 200 candidates (the element, the next siblings of it and
 * of its 4 nearest ancestors, aria-controls targets, popovers, menus,
 * dialogs, listboxes, tooltips) so that a class or style change can say
 * what it showed or hid. Lists: the ones holding the element first, then
 * those under its 2nd to 4th ancestors, then in document order: at most 64
 * lists and 2,000 items in all (review F10: the cost of every action stays
 * bounded on pages with big lists; an empty list is watched for 100);
 * only a list read whole is counted.
 * Returns a recorder object; snap_js_collect_fn reads and stops it.
 * Runs: inside snap_js_observe_fn and snap_js_observe_doc_expr. */
#define OBSERVE_SRC \
    "function(){" VIS_SRC TX_SRC "var d=this.ownerDocument||document," \
    "rec={n:[],rm:[],at:[],tg:[],el:this.nodeType===1?this:null,vis:vis,tx:tx,hx:hx,d:d,w:0};" \
    "rec.dp=function(){var a=d.activeElement;" \
    "while(a&&a.shadowRoot&&a.shadowRoot.activeElement)a=a.shadowRoot.activeElement;return a;};" \
    "rec.f0=rec.dp();var el=rec.el,bud=2000,ls=[]," \
    "LS='ul,ol,[role=list],[role=listbox],[role=grid],[role=tree],[role=menu],tbody'," \
    "ad=function(l){if(ls.length<64&&ls.indexOf(l)<0)ls.push(l);};" \
    "for(var a=el,i=0;a&&i<6;a=a.parentElement,i++){if(a.matches(LS))ad(a);" \
    "if(i>1&&i<5)[].slice.call(a.querySelectorAll(LS),0,64).forEach(ad);}" \
    "[].slice.call(d.querySelectorAll(LS),0,64).forEach(ad);" \
    "rec.L=ls.map(function(l){var m=l.children.length?Math.min(1000,bud):100;if(m<=0)return null;" \
    "var c=[].slice.call(l.children,0,m);bud-=c.length;" \
    "return{l:l,m:m,full:c.length===l.children.length,c:c.filter(vis)};}).filter(Boolean);" \
    "rec.sm=new Map();var sp=function(x){if(x&&x.nodeType===1&&!rec.sm.has(x)&&rec.sm.size<200)" \
    "rec.sm.set(x,vis(x));};sp(el);for(var a=el,i=0;a&&i<5;a=a.parentElement,i++)" \
    "for(var s=a.nextElementSibling,j=0;s&&j<4;s=s.nextElementSibling,j++)sp(s);" \
    "if(el)(el.getAttribute('aria-controls')||'').split(/\\s+/).forEach(function(c){" \
    "if(c)sp(d.getElementById(c));});[].slice.call(d.querySelectorAll('[popover],[role=menu]," \
    "[role=dialog],[role=listbox],[role=tooltip],dialog'),0,200).forEach(sp);" \
    "var O={subtree:true,childList:true,characterData:true,attributes:true," \
    "attributeOldValue:true,attributeFilter:['hidden','class','style','aria-hidden','open']};" \
    "var o=new MutationObserver(function(ms){ms.forEach(function(m){" \
    "if(m.type==='characterData'){if(rec.n.length<200)rec.n.push(m.target);}" \
    "else if(m.type==='attributes'){if(rec.at.length<200)rec.at.push([m.target," \
    "m.attributeName,m.oldValue]);}" \
    "else{m.addedNodes.forEach(function(x){if(rec.n.length<200)rec.n.push(x);" \
    "if(x.shadowRoot&&rec.w<32){rec.w++;o.observe(x.shadowRoot,O);}});" \
    "m.removedNodes.forEach(function(x){if(rec.rm.length<200&&(x.nodeType===1||" \
    "x.nodeType===3)&&!hx(x))rec.rm.push([x,tx(x)]);});}});});" \
    "var k=0,W=function(r){if(rec.w>=32)return;rec.w++;o.observe(r,O);" \
    "var it=(r.ownerDocument||r).createTreeWalker(r,1);" \
    "for(var e=it.nextNode();e&&k<5000;e=it.nextNode(),k++){if(e.shadowRoot)W(e.shadowRoot);" \
    "if(/^I?FRAME$/.test(e.tagName)){try{var c=e.contentDocument;if(c&&c.documentElement)W(c);}" \
    "catch(_){}}}};W(d);" \
    "rec.T=function(ev){if(rec.tg.length<50)rec.tg.push([ev.target,ev.newState]);};" \
    "d.addEventListener('toggle',rec.T,true);d.addEventListener('beforetoggle',rec.T,true);" \
    "rec.o=o;return rec;}"

/* Runs: on a node, the element acted on (click, type). Returns: by
 * reference, the recorder (read by snap_js_collect_fn), in the node's world. */
const char snap_js_observe_fn[] = OBSERVE_SRC;

/* The same recorder on the document (for press, which has no element).
 * Runs: in the page, in cdpgate's isolated world of the main frame (press).
 * Returns: by reference, the recorder. */
const char snap_js_observe_doc_expr[] = "(" OBSERVE_SRC ").call(document)";

/* Stop the recorder r (JS source, a block). */
#define UNOBSERVE_SRC \
    "{r.o.disconnect();r.d.removeEventListener('toggle',r.T,true);" \
    "r.d.removeEventListener('beforetoggle',r.T,true);}"

/* Stop the recorder without reading it (after snap_js_collect_fn(true)).
 * Runs: on the recorder object of snap_js_observe_*. Returns: nothing. */
const char snap_js_unobserve_fn[] = "function(){var r=this;" UNOBSERVE_SRC "}";

/* What changed since snap_js_observe_fn, and stop watching (unless the
 * argument is true: then it keeps watching, and snap_js_unobserve_fn or
 * another collect stops it):
 *   t: new visible text, outermost nodes only (one string, at most 300
 *      characters); text a node removed meanwhile held is not new (a list
 *      rendered again);
 *   rm: the text of nodes removed and not put back (outermost, at most 8);
 *   hid, shn: the text of elements hidden or shown (list items, and
 *      elements whose hidden, style, aria-hidden or open attribute says
 *      they were shown or hidden before, popovers and details toggled, and
 *      sampled candidates whose visibility differs from the sample), at
 *      most 8 each, with their counts nh, ns;
 *   cu: elements whose class or style changed with no way to say what
 *      that showed (not sampled), counted;
 *   lists: [[before, after]] visible items, of the lists read whole whose
 *      count changed (at most 2);
 *   focus: {role, name} of the element that has the focus now when it
 *      moved there (not the element acted on, nor inside it); name from
 *      aria-label, a label, placeholder or title (a button's or link's
 *      text), never a value;
 *   any: true when the recorder saw added or shown nodes.
 * Texts are whitespace-collapsed, each at most 80 characters.
 * Runs: on the recorder object of snap_js_observe_*. Returns: that object
 * (plain values). */
const char snap_js_collect_fn[] =
    "function(k){var r=this;if(k!==true)" UNOBSERVE_SRC
    "var vis=r.vis,tx=r.tx,seen=[],out=[],keys=[];"
    "var C=function(s){return String(s||'').replace(" SHOWN_WS ",' ')" SHOWN_TRIM ";};"
    "var cut=function(s){s=C(s);return s.length>80?s.slice(0,80)+'\\u2026':s;};"
    "var txt=function(x){if(!x.isConnected)return'';"
    "var e=x.nodeType===1?x:x.parentElement;if(!e||!e.getClientRects().length)return'';"
    "if(r.hx(e))return'';"
    "var s=x.nodeType===3?x.data:x.nodeType===1?(x.innerText||''):'';return C(s);};"
    "r.n.forEach(function(x){if(seen.indexOf(x)>=0)return;"
    "for(var p=x.parentNode;p;p=p.parentNode)if(seen.indexOf(p)>=0)return;"
    "seen.push(x);var s=txt(x);if(s&&out.indexOf(s)<0){out.push(s);keys.push(C(tx(x)));}});"
    "var res={rm:[],hid:[],shn:[],nh:0,ns:0,lists:[],cu:0},added=new Set(r.n);"
    "r.rm.forEach(function(p){var x=p[0];if(x.isConnected)return;"
    "for(var q=r.rm.length;q--;)if(r.rm[q][0]!==x&&r.rm[q][0].contains&&r.rm[q][0].contains(x))"
    "return;var s=C(p[1]);if(!s)return;var i=keys.indexOf(s);"
    "if(i>=0){keys.splice(i,1);out.splice(i,1);return;}"
    "if(res.rm.indexOf(cut(s))<0&&res.rm.length<8)res.rm.push(cut(s));});"
    "var H=[],S=[];"
    "r.L.forEach(function(e){if(!e.l.isConnected)return;"
    "var lim=e.m,now=[].slice.call(e.l.children,0,lim).filter(vis),"
    "was=new Set(e.c),is=new Set(now);"
    "e.c.forEach(function(c){if(c.isConnected&&!is.has(c))H.push(c);});"
    "now.forEach(function(c){if(!was.has(c)&&!added.has(c))S.push(c);});"
    "if(e.full&&e.l.children.length<=lim&&now.length!==e.c.length&&res.lists.length<2)"
    "res.lists.push([e.c.length,now.length]);});"
    "var done=new Set();r.tg.forEach(function(p){var x=p[0];if(done.has(x)||!x.isConnected)return;"
    "var now=vis(x);if(now!==(p[1]==='open'))return;done.add(x);(now?S:H).push(x);});"
    "r.sm.forEach(function(v,x){if(done.has(x)||!x.isConnected||vis(x)===v)return;done.add(x);"
    "(v?H:S).push(x);});"
    "r.at.forEach(function(p){var x=p[0],k=p[1],ov=p[2];"
    "if(done.has(x)||x.nodeType!==1||!x.isConnected)return;var was=null;"
    "if(k==='hidden')was=ov===null;else if(k==='aria-hidden')was=ov!=='true';"
    "else if(k==='open')was=ov!==null;"
    "else if(k==='style')was=!/display\\s*:\\s*none|visibility\\s*:\\s*hidden/i.test(ov||'');"
    "if(was===null){if(!r.sm.has(x)&&!done.has(x)){done.add(x);res.cu++;}return;}"
    "done.add(x);var now=vis(x);if(was===now)return;"
    "(now?S:H).push(x);});"
    "var outer=function(L){return L.filter(function(x){return!L.some(function(y){"
    "return y!==x&&y.contains(x);});});};"
    "H=outer(H);S=outer(S);res.nh=H.length;res.ns=S.length;"
    "H.forEach(function(x){var s=cut(tx(x));if(s&&res.hid.length<8)res.hid.push(s);});"
    "S.forEach(function(x){var s=cut(x.innerText||tx(x));if(s&&res.shn.length<8)"
    "res.shn.push(s);});"
    "var f=r.dp(),el=r.el;if(f&&f!==r.f0&&f!==document.body&&f!==document.documentElement&&"
    "!(el&&(f===el||el.contains(f)||f.contains(el)))){"
    "var tg=f.tagName.toLowerCase(),ty=(f.type||'').toLowerCase(),ro=f.getAttribute('role')||("
    "tg==='input'?(/^(checkbox|radio)$/.test(ty)?ty:/^(submit|reset|button)$/.test(ty)?'button':"
    "ty==='range'?'slider':ty==='search'?'searchbox':'textbox'):tg==='textarea'?'textbox':"
    "tg==='button'?'button':tg==='a'?'link':tg==='select'?'combobox':"
    "f.isContentEditable?'textbox':tg);"
    "var nm=f.getAttribute('aria-label')||(f.labels&&f.labels[0]?f.labels[0].innerText:'')||"
    "f.getAttribute('placeholder')||f.getAttribute('title')||"
    "(/^(button|link|menuitem|tab|option)$/.test(ro)?f.innerText:'')||'';"
    "res.focus={role:C(ro).slice(0,32),name:cut(nm)};}"
    "var s=out.join(' | ');res.t=s.length>300?s.slice(0,300)+'\\u2026':s;"
    "res.any=!!(out.length||S.length);return res;}";

/* The element's state after the action (checkbox, radio, ARIA states).
 * Runs: on a node, the element after the action (act_result.c).
 * Returns: {checked?, expanded?, pressed?, selected?, focused?} or {gone:1}. */
const char snap_js_after_fn[] =
    "function(){var e=this.nodeType===1?this:this.parentElement;"
    "if(e&&e.tagName==='LABEL'&&e.control)e=e.control;"
    "if(!e||!e.isConnected)return{gone:1};var r={},t=(e.type||'').toLowerCase();"
    "if(e.tagName==='INPUT'&&(t==='checkbox'||t==='radio'))r.checked=e.checked?'true':'false';"
    "else if(e.hasAttribute('aria-checked'))r.checked=e.getAttribute('aria-checked');"
    "['expanded','pressed','selected'].forEach(function(k){"
    "if(e.hasAttribute('aria-'+k))r[k]=e.getAttribute('aria-'+k);});"
    "if(document.activeElement===e)r.focused=true;return r;}";

/* Choose an <option> of a <select> the way a user's pick does.
 * Runs: on a node, an <option> clicked (act_pointer.c); changes the page.
 * Returns: true, or false outside a <select>. */
const char snap_js_pick_option_fn[] =
    "function(){var s=this.closest('select');if(!s)return false;"
    "if(s.multiple)this.selected=!this.selected;else this.selected=true;"
    "s.dispatchEvent(new Event('input',{bubbles:true}));"
    "s.dispatchEvent(new Event('change',{bubbles:true}));return true;}";

/* Resolves after the frame has drawn twice, or after 100 ms (a frame that
 * does not draw, e.g. in a background tab, must not hold the click up).
 * Runs: in the page, awaited (click). Returns: 1. */
const char snap_js_raf2_expr[] =
    "new Promise(function(r){var f=function(){r(1);};setTimeout(f,100);"
    "requestAnimationFrame(function(){requestAnimationFrame(f);});})";

/* Scroll the page back to where it was (after the crops of a scan,
 * act_page.c): p is [left, top] in CSS px.
 * Runs: as snap_js_scroll_back_expr + "[x,y])" in cdpgate's isolated world
 * of the main frame (the browser's own scrollTo); the registered template
 * SCROLL_BACK_SRC data ")"; changes the page (its scroll only). Returns: 1. */
#define SCROLL_BACK_SRC \
    "(function(p){scrollTo({left:+p[0]||0,top:+p[1]||0,behavior:'instant'});return 1;})("
const char snap_js_scroll_back_expr[] = SCROLL_BACK_SRC;

/* Resolves once the page has run its next frame's animation callbacks and
 * a task after them (what a click set going by then has started), or after
 * 100 ms (a page that does not draw).
 * Runs: in the page, awaited (after a click). Returns: 1. */
const char snap_js_frame_expr[] =
    "new Promise(function(r){var f=function(){r(1);};setTimeout(f,100);"
    "requestAnimationFrame(function(){setTimeout(f,0);});})";

/* Is the element a file input (plain values back)?
 * Runs: on a node (upload). Returns: {ok:1}, {no:tag}, {disabled:1} or
 * {gone:1}. */
const char snap_js_file_input_fn[] =
    "function(){var e=this.nodeType===1?this:this.parentElement;"
    "if(e&&e.tagName==='LABEL'&&e.control)e=e.control;if(!e)return{gone:1};"
    "if(e.tagName!=='INPUT'||(e.type||'').toLowerCase()!=='file')"
    "return{no:e.tagName.toLowerCase()};"
    "if(e.matches(':disabled'))return{disabled:1};return{ok:1};}";

/* Check the element takes text, focus it and select what it holds (so the
 * inserted text replaces it), then where the focus is: at once, and when
 * it is still there, again a task later (a page's focus handler may move
 * it in a microtask or a timer of its own: the keys are sent only if it
 * stayed; a hidden page's timers are throttled, so there a posted message
 * is the task). Plain values back.
 * Runs: on a node (type), awaited; changes the page (focus, selection).
 * Returns: {tag, secret, sf?, ce?, had, focused, to?} or
 * {gone|select|no|disabled}. */
const char snap_js_prep_type_fn[] =
    "function(){" SF_SRC FW_SRC SEC_SRC
    "var e=this.nodeType===1?this:this.parentElement;if(!e)return{gone:1};"
    "if(e.tagName==='LABEL'&&e.control)e=e.control;"
    "var r={tag:e.tagName.toLowerCase()},t=(e.type||'').toLowerCase();"
    "if(e.tagName==='SELECT')return{select:1};"
    "var txt=e.tagName==='TEXTAREA'||(e.tagName==='INPUT'&&!/^(checkbox|radio|button|submit|"
    "reset|file|image|range|color|hidden)$/.test(t));"
    "if(!txt&&!e.isContentEditable)return{no:r.tag+(t&&e.tagName==='INPUT'?' type='+t:'')+"
    "(e.getAttribute('role')?' role='+e.getAttribute('role'):'')};"
    "if(e.matches(':disabled'))return{disabled:e.hasAttribute('disabled')?'disabled':"
    "'inside a disabled fieldset'};"
    "if(txt&&e.readOnly)return{disabled:'read-only'};"
    "if(e.closest('[aria-disabled=true]'))return{disabled:'aria-disabled'};"
    "if(e.closest('[inert]'))return{disabled:'inert (blocked by a modal)'};"
    "r.secret=isSec(e);var sf=sfOf(e);if(sf)r.sf=sf;"
    "e.focus();"
    "if(!txt){var s=getSelection(),g=document.createRange();g.selectNodeContents(e);"
    "s.removeAllRanges();s.addRange(g);r.ce=1;r.had=e.textContent.length>0;}"
    "else{try{e.select();}catch(x){}r.had=e.value.length>0;}"
    "var to=fw(e);if(to){r.focused=false;r.to=to;return r;}"
    "return new Promise(function(ok){var f=function(){var t=fw(e);r.focused=!t;if(t)r.to=t;"
    "ok(r);};if(!document.hidden){setTimeout(f,0);return;}var c=new MessageChannel();"
    "c.port1.onmessage=f;c.port2.postMessage(0);});}";

/* The value now in the field (text of a contenteditable), unless the field
 * is secret now (isSec: the page may have made it one since it was typed
 * into) or the argument k is true (cdpgate knows it was one): then only
 * its length in characters (code points), the value never leaves the page.
 * Runs: on a node (type, after the text went in, and after a submit).
 * Returns: {v: string}, {s: 1, n: length} or null (gone). */
const char snap_js_value_fn[] =
    "function(k){" SEC_SRC "var e=this.nodeType===1?this:this.parentElement;"
    "if(e&&e.tagName==='LABEL'&&e.control)e=e.control;if(!e||!e.isConnected)return null;"
    "var v=String((e.tagName==='INPUT'||e.tagName==='TEXTAREA')?e.value:e.innerText);"
    "return k===true||isSec(e)?{s:1,n:Array.from(v).length}:{v:v};}";

/* What select matches on a native <select>: for each value the option
 * whose value is it, else whose label is it (whitespace collapsed, then
 * case folded), into pick (or miss); L(p): the option's words as the page
 * shows or names them (label, text, aria-label, title). */
#define SELECT_PICK_SRC                                                                   \
    "var N=function(s){return String(s==null?'':s).replace(/\\s+/g,' ').trim();};"       \
    "var L=function(p,x){var u=[];[p.label,p.textContent,p.getAttribute('aria-label'),"   \
    "p.getAttribute('title'),x].forEach(function(s){s=N(s);if(s&&u.indexOf(s)<0)u.push(s);});" \
    "return u.join(' / ');};"                                                             \
    "var o=e.tagName==='SELECT'?[].slice.call(e.options):[],pick=[],miss=[];"             \
    "vals.forEach(function(v){var w=N(v).toLowerCase();"                                  \
    "var x=o.filter(function(p){return p.value===v;})[0]||"                               \
    "o.filter(function(p){return N(p.label)===N(v);})[0]||"                               \
    "o.filter(function(p){return N(p.label).toLowerCase()===w;})[0];"                     \
    "if(!x)miss.push(v);else if(x.disabled||(x.parentElement&&x.parentElement.disabled))" \
    "miss.push(v+' (disabled)');else pick.push(x);});"                                    \
    "var MISS={miss:miss,total:o.length,avail:o.slice(0,40).map(function(p){"             \
    "return N(p.label)+(p.value!==N(p.label)?' (value '+p.value+')':'');})};"

/* Choose options of a native <select> by value or label (input and change
 * events), exactly the ones the gate judged: exp, [{l, v}] from
 * snap_js_select_pick_fn, or {changed} without touching anything. For
 * another element: its role, aria-haspopup and tag (the ARIA path).
 * Runs: on a node, the element (select), arguments: the values, exp.
 * Returns: by value, {ok, sel}, {miss, total, avail}, {single},
 * {disabled}, {changed}, {gone} or {role, popup, tag}. */
const char snap_js_select_fn[] =
    "function(vals,exp){var e=this.nodeType===1?this:this.parentElement;if(!e)return{gone:1};"
    "if(e.tagName==='LABEL'&&e.control)e=e.control;"
    "if(e.tagName!=='SELECT')return{role:e.getAttribute('role')||'',"
    "popup:e.getAttribute('aria-haspopup')||'',tag:e.tagName.toLowerCase()};"
    "if(e.matches(':disabled'))return{disabled:e.hasAttribute('disabled')?'disabled':"
    "'inside a disabled fieldset'};" SELECT_PICK_SRC
    "if(miss.length)return MISS;"
    "if(!e.multiple&&pick.length>1)return{single:1};"
    "if(!exp||exp.length!==pick.length||pick.some(function(p,i){return p.value!==exp[i].v||"
    "L(p)!==exp[i].l;}))return{changed:1};e.focus();"
    "if(e.multiple)o.forEach(function(p){p.selected=pick.indexOf(p)>=0;});"
    "else pick[0].selected=true;"
    "e.dispatchEvent(new Event('input',{bubbles:true}));"
    "e.dispatchEvent(new Event('change',{bubbles:true}));"
    "return{ok:1,sel:pick.map(function(p){return N(p.label);})};}";

/* The options the values pick, read before the gate: on a native <select>
 * as snap_js_select_fn matches; on an ARIA listbox or combobox, in the
 * listbox it is, controls or owns when it is there (by name, then case
 * folded, then data-value or value), else the value itself as the name the
 * option will have to carry (u: unresolved).
 * Runs: on a node, the element (select), argument: the values.
 * Returns: by value, {opts: [{l, v, n, u}]} (l the option's words, v its
 * value, n its name), {miss, total, avail} or {gone}. */
const char snap_js_select_pick_fn[] =
    "function(vals){var e=this.nodeType===1?this:this.parentElement;if(!e)return{gone:1};"
    "if(e.tagName==='LABEL'&&e.control)e=e.control;" SELECT_PICK_SRC
    "if(e.tagName==='SELECT'){if(miss.length)return MISS;return{opts:pick.map(function(p){"
    "return{l:L(p),v:p.value,n:N(p.label)};})};}"
    "var d=e.ownerDocument,l=null;if(e.getAttribute('role')==='listbox')l=e;else{"
    "var id=e.getAttribute('aria-controls')||e.getAttribute('aria-owns');"
    "l=id&&d.getElementById(id.split(' ')[0]);"
    "if(l&&l.getAttribute('role')!=='listbox')l=l.querySelector('[role=listbox]');"
    "if(!l)l=e.querySelector('[role=listbox]');}"
    "var os=l?[].slice.call(l.querySelectorAll('[role=option]')):[];"
    "var nm=function(x){return N(x.getAttribute('aria-label')||x.textContent);};"
    "return{opts:vals.map(function(v){var w=N(v).toLowerCase();"
    "var m=os.filter(function(x){return nm(x)===N(v);})[0]||"
    "os.filter(function(x){return nm(x).toLowerCase()===w;})[0]||"
    "os.filter(function(x){return(x.getAttribute('data-value')||x.getAttribute('value'))"
    "===v;})[0];"
    "return m?{l:L(m,nm(m)),v:m.getAttribute('data-value')||m.getAttribute('value')||'',"
    "n:nm(m)}:{l:N(v),v:'',n:N(v),u:1};})};}";

/* An ARIA option's words as snap_js_select_pick_fn's L gives them (text,
 * aria-label, title; the ones that differ, joined by " / "): what the
 * gate judged must be what is clicked.
 * Runs: on a node, an ARIA option (select). Returns: a string. */
const char snap_js_option_words_fn[] =
    "function(){var p=this,u=[];[p.textContent,p.getAttribute('aria-label'),"
    "p.getAttribute('title')].forEach(function(s){s=String(s==null?'':s).replace(/\\s+/g,' ')"
    ".trim();if(s&&u.indexOf(s)<0)u.push(s);});return u.join(' / ');}";

/* ARIA: find the option named v in the listbox this element is, controls
 * or owns (or the visible listbox after a combobox opened), waiting up to a
 * second for it to appear (mutation-driven). Returns the option element, or
 * a JSON string {avail, total, nolist}.
 * Runs: on a node, argument: the option asked for (select on an ARIA
 * widget), awaited. Returns: by reference, the option element or a string. */
const char snap_js_find_option_fn[] =
    "function(v){var cb=this,d=cb.ownerDocument;"
    "var N=function(s){return String(s||'').replace(/\\s+/g,' ').trim();},w=N(v).toLowerCase();"
    "var lb=function(){if(cb.getAttribute('role')==='listbox')return cb;"
    "var id=cb.getAttribute('aria-controls')||cb.getAttribute('aria-owns'),"
    "l=id&&d.getElementById(id.split(' ')[0]);"
    "if(l&&l.getAttribute('role')!=='listbox'){var q=l.querySelector('[role=listbox]');"
    "if(q)l=q;}if(!l)l=cb.querySelector('[role=listbox]');"
    "if(!l)l=[].slice.call(d.querySelectorAll('[role=listbox]')).filter(function(x){"
    "return x.getClientRects().length;})[0];return l||null;};"
    "var nm=function(o){return N(o.getAttribute('aria-label')||o.textContent);};"
    "var find=function(){var l=lb();if(!l)return null;"
    "var os=[].slice.call(l.querySelectorAll('[role=option]'));"
    "var m=os.filter(function(o){return nm(o)===N(v);})[0]||"
    "os.filter(function(o){return nm(o).toLowerCase()===w;})[0]||"
    "os.filter(function(o){return(o.getAttribute('data-value')||o.getAttribute('value'))"
    "===v;})[0];return m||{avail:os.slice(0,40).map(nm),total:os.length};};"
    "return new Promise(function(res){var r=find();if(r&&r.nodeType)return res(r);"
    "var tm,mo=new MutationObserver(function(){var x=find();if(x&&x.nodeType){"
    "mo.disconnect();clearTimeout(tm);res(x);}});"
    "mo.observe(d,{subtree:true,childList:true,attributes:true});"
    "tm=setTimeout(function(){mo.disconnect();var x=find();"
    "res(x&&x.nodeType?x:JSON.stringify(x||{nolist:1}));},1000);});}";

/* Whether an ARIA option is selected already.
 * Runs: on a node, an ARIA option (select). Returns: a boolean. */
const char snap_js_aria_selected_fn[] =
    "function(){return this.getAttribute('aria-selected')==='true'}";

/* What the listbox or combobox shows as chosen now.
 * Runs: on a node, the listbox or combobox (select). Returns: an array
 * of strings. */
const char snap_js_chosen_fn[] =
    "function(){var e=this,N=function(s){return String(s||'').replace(" SHOWN_WS ",' ')"
    SHOWN_TRIM ";};if(e.getAttribute('role')==='listbox')return[].slice.call(e.querySelectorAll("
    "'[role=option][aria-selected=true]')).map(function(o){return N(o.textContent);});"
    "return[N(e.tagName==='INPUT'?e.value:e.textContent)];}";

/* The labels of the chosen options of a native <select>.
 * Runs: on a node, a native <select> (select). Returns: an array of
 * strings. */
const char snap_js_value_select_fn[] =
    "function(){var e=this;if(e.tagName==='LABEL'&&e.control)e=e.control;"
    "return[].slice.call(e.selectedOptions||[]).map(function(o){"
    "return o.label.replace(" SHOWN_WS ",' ')" SHOWN_TRIM ";});}";

/* The focused element of the page (through open shadow roots), or null
 * for the body.
 * Runs: in the page, in cdpgate's isolated world of the main frame (press).
 * Returns: {sf: [names]} or {}. */
const char snap_js_sf_expr[] =
    "(function(){" SF_SRC "var e=document.activeElement;while(e&&e.shadowRoot&&"
    "e.shadowRoot.activeElement)e=e.shadowRoot.activeElement;var s=sfOf(e);"
    "return s?{sf:s}:{};})()";

/* The focused element of the page (through open shadow roots), or null
 * for the body. Runs: in the page, in cdpgate's isolated world of the main
 * frame (press). Returns: by reference, the element or null. */
const char snap_js_focus_expr[] =
    "(function(){var e=document.activeElement;while(e&&e.shadowRoot&&"
    "e.shadowRoot.activeElement)e=e.shadowRoot.activeElement;"
    "return e===document.body||e===document.documentElement?null:e;})()";

/* The element a key goes to: through open shadow roots and same-origin
 * frames; an <iframe> when the focus is inside a frame this document cannot
 * see into (cross-origin); null for the body.
 * Runs: in the page, in cdpgate's isolated world of the main frame (press:
 * the gate judges the key against it). Returns: by reference, the element
 * or null. */
const char snap_js_focus_deep_expr[] =
    "(function(){var e=document.activeElement;for(var i=0;i<20&&e;i++){"
    "if(e.shadowRoot&&e.shadowRoot.activeElement){e=e.shadowRoot.activeElement;continue;}"
    "if(e.tagName==='IFRAME'||e.tagName==='FRAME'){var d=null;try{d=e.contentDocument;}"
    "catch(x){}if(d&&d.activeElement&&d.activeElement!==d.body){e=d.activeElement;continue;}}"
    "break;}return e===document.body||e===document.documentElement?null:e;})()";

/* Is the element a key goes to (as snap_js_focus_deep_expr finds it) still this
 * one?
 * Runs: on a node, the element the key was meant for (press).
 * Returns: a boolean. */
const char snap_js_focus_same_fn[] =
    "function(){var e=document.activeElement;for(var i=0;i<20&&e;i++){"
    "if(e.shadowRoot&&e.shadowRoot.activeElement){e=e.shadowRoot.activeElement;continue;}"
    "if(e.tagName==='IFRAME'||e.tagName==='FRAME'){var d=null;try{d=e.contentDocument;}"
    "catch(x){}if(d&&d.activeElement&&d.activeElement!==d.body){e=d.activeElement;continue;}}"
    "break;}return e===this;}";

/* Scroll the page (or, when the document itself does not scroll, its
 * largest scrollable element) by about a viewport, or to the top or the
 * bottom; d: 0 report only, 1 down, 2 up, 3 top, 4 bottom.
 * Runs: as snap_js_scroll_expr + "(d)" in the page (scroll), and is the
 * registered template SCROLL_SRC "(" data ")"; changes the page. Returns:
 * {y, y0, h, vh, inner}. */
#define SCROLL_SRC \
    "(function(d){var se=document.scrollingElement||document.documentElement,el=se," \
    "vh=innerHeight;if(se.scrollHeight<=innerHeight+1){var best=null,ba=0," \
    "all=document.querySelectorAll('body *');" \
    "for(var i=0;i<all.length&&i<20000;i++){var x=all[i];" \
    "if(x.scrollHeight>x.clientHeight+1){var o=getComputedStyle(x).overflowY;" \
    "if(o==='auto'||o==='scroll'){var ar=x.clientWidth*x.clientHeight;" \
    "if(ar>ba){ba=ar;best=x;}}}}if(best){el=best;vh=best.clientHeight;}}" \
    "var y0=el.scrollTop,step=Math.max(40,Math.round(vh*0.85)),I='instant';" \
    "if(d===1)el.scrollBy({top:step,behavior:I});" \
    "else if(d===2)el.scrollBy({top:-step,behavior:I});" \
    "else if(d===3)el.scrollTo({top:0,behavior:I});" \
    "else if(d===4)el.scrollTo({top:el.scrollHeight,behavior:I});" \
    "return{y:Math.round(el.scrollTop),y0:Math.round(y0),h:el.scrollHeight,vh:vh," \
    "inner:el===se?'':(el.tagName.toLowerCase()+(el.id?'#'+el.id:''))};})"

const char snap_js_scroll_expr[] = SCROLL_SRC;

/* Resolves once the page has run its next frame (scroll events are
 * dispatched in it, before its animation callbacks) and a task after it,
 * or after 1 s (a page that does not draw).
 * Runs: in the page, awaited (after a scroll). Returns: 1. */
const char snap_js_scroll_frame_expr[] =
    "new Promise(function(r){var f=function(){r(1);};setTimeout(f,1000);"
    "requestAnimationFrame(function(){setTimeout(f,0);});})";

/* Which section is in view: the last heading (h1-h6, role=heading, up to
 * 5,000) whose top is above the first third of the viewport, when it is
 * on screen; else the first one below it on screen; else (the section's
 * heading scrolled above the view: R5, review s10) that last heading,
 * marked above. Its level and text (at most 120 characters). Read only.
 * Runs: in the page, in cdpgate's isolated world of the main frame (after
 * a scroll, or a click that moved within the page). Returns: {tag, text,
 * above} or null. */
const char snap_js_in_view_expr[] =
    "(function(){var hs=document.querySelectorAll('h1,h2,h3,h4,h5,h6,[role=heading]'),"
    "vh=innerHeight,lim=vh/3,best=null,bb=null,next=null;"
    "for(var i=0;i<hs.length&&i<5000;i++){var b=hs[i].getBoundingClientRect();"
    "if(!b.width&&!b.height)continue;if(b.top<=lim){best=hs[i];bb=b;}"
    "else{if(b.top<vh)next=hs[i];break;}}var up=false,h=null;"
    "if(best&&bb.bottom>0)h=best;else if(next)h=next;else if(best){h=best;up=true;}"
    "if(!h)return null;"
    "var t=String(h.innerText||h.textContent||'').replace(" SHOWN_WS ",' ')" SHOWN_TRIM ";"
    "var lv=h.getAttribute('aria-level')||(/^H[1-6]$/.test(h.tagName)?h.tagName.slice(1):'');"
    "return{tag:'h'+lv,text:t.length>120?t.slice(0,120)+'\\u2026':t,above:up};})()";

/* ==== the agent (agent*.c) ==== */

/* Whether a node is still in its document. Runs: on a node, a ref
 * being resolved (agent_refs.c). Returns: a boolean. */
const char snap_js_connected_fn[] =
    "function(){return this.isConnected&&this.ownerDocument===document}";

/* [meta refresh delay in s or -1, little text and at most two controls,
 * redirect words in the text or title].
 * Whether the page looks like a redirect in progress. Runs: in the page
 * (agent_wait.c). Returns: [delay, sparse, words]. */
const char snap_js_redirect_expr[] =
    "(function(){var b=document.body,t=b?String(b.innerText||'').trim():'';"
    "var m=document.querySelector('meta[http-equiv=refresh i]'),d=-1;"
    "if(m){var x=parseFloat(m.getAttribute('content')||'');if(x>=0)d=x;}"
    "var n=document.querySelectorAll('input:not([type=hidden]),select,textarea,button,"
    "a[href]').length;"
    "var w=/redirect|forwarding|please wait|one moment|just a moment|loading|being taken|"
    "taking you|you will be|signing you in|logging you in|continue to/i.test("
    "t.slice(0,600)+' '+document.title);return[d,t.length<600&&n<=2,w];})()";

/* The warm cache's mutation counter (agent_refs.c snap_frame_mut_read;
 * issue 13, point 4b). Runs in cdpgate's isolated world of a frame
 * (snap_frame_world), never the page's: the page's scripts can neither
 * read nor reset it. The first call in a document installs a
 * MutationObserver (child lists, attributes, text; on the document and
 * on every open shadow root found then or added later) and capture
 * listeners on the window for input, change, focus moves and <details>
 * toggles (a typed value or a focus change moves no DOM node), and
 * returns -1; later calls return how many changes it has counted. */
const char snap_js_mut_expr[] =
    "(function(){var g=globalThis,s=g.__cdpgateMut;if(s&&s.d===document)return s.n;"
    "s={n:0,d:document};var seen=new WeakSet(),O={subtree:true,childList:true,"
    "attributes:true,characterData:true};"
    "var o=new MutationObserver(function(rs){s.n++;for(var i=0;i<rs.length;i++){"
    "var a=rs[i].addedNodes;for(var j=0;j<a.length;j++)sh(a[j]);}});"
    "function sh(n){if(!n||(n.nodeType!==1&&n.nodeType!==9&&n.nodeType!==11))return;"
    "var w=document.createTreeWalker(n,1),e=n.nodeType===1?n:w.nextNode();"
    "for(;e;e=w.nextNode()){var r=e.shadowRoot;if(r&&!seen.has(r)){seen.add(r);"
    "o.observe(r,O);sh(r);}}}"
    "o.observe(document,O);sh(document);var f=function(){s.n++;};"
    "['input','change','focusin','focusout','toggle'].forEach(function(k){"
    "window.addEventListener(k,f,true);});g.__cdpgateMut=s;return -1;})()";

/* ==== browser contexts and login (session.c) ==== */

/* localStorage of the origin: set from a JSON array of pairs (a template:
 * the middle is data), and read.
 * Runs: in the page, as a template prefix + JSON [[k,v],...] + suffix
 * (session restore, before the first navigation); changes the page (its
 * localStorage). Returns: the count. The values are session data: sent
 * with cdp_call_secret, never logged. */
const char snap_js_ls_set_prefix[] = "(d => { localStorage.clear(); for (const [k, v] of d) "
    "localStorage.setItem(String(k), String(v)); return d.length; })(";

const char snap_js_ls_set_suffix[] = ")";

/* Runs: in the page (login capture, cdp_call_secret). Returns: [[k,v],...],
 * session data (wiped). */
const char snap_js_ls_get[] = "Object.keys(localStorage).map(k => [k, localStorage.getItem(k)])";

/* localStorage keys only (the session check).
 * Runs: in cdpgate's isolated world of the main frame (snap_frame_world),
 * the session check. Returns: an array of key names (never values). */
const char snap_js_ls_keys[] = "Object.keys(localStorage)";

/* A login wall: a visible password field, and the path. Runs: in the
 * page, in cdpgate's isolated world of the main frame (session_check.c,
 * after an open). Returns: {pw: boolean, path}. */
const char snap_js_wall[] =
    "(() => { const vis = e => { const r = e.getBoundingClientRect(); "
    "const s = getComputedStyle(e); return r.width > 0 && r.height > 0 && "
    "s.visibility !== 'hidden' && s.display !== 'none'; }; "
    "return { pw: [...document.querySelectorAll('input[type=password]')].some(vis), "
    "path: location.pathname }; })()";

/* ==== the gate glue (policy.c) ==== */

/* Page-check helper (JS source, a var statement): the DOM read through the
 * prototypes' own getters. A form's named controls shadow its built-in
 * properties ([LegacyOverrideBuiltIns]), in cdpgate's isolated world too:
 * `<input name=elements>` makes form.elements that input, and a read of
 * it iterates nothing without throwing (red team s12, G4). A method a
 * control shadows throws when called, and the script fails closed; a
 * property read does not, so every property read on an element that may be
 * a form goes through these: ELS(f) its controls (form= ones outside it
 * too; [] when f is not a form), AT attributes, FC firstChild, NX
 * nextSibling.
 * Runs: inside the scripts below that use it (not on its own). */
#define JS_SAFE_DOM \
    "var GD=(C,k)=>Object.getOwnPropertyDescriptor(C.prototype,k).get," \
    "ELS=f=>f instanceof HTMLFormElement?GD(HTMLFormElement,'elements').call(f):[]," \
    "AT=GD(Element,'attributes'),FC=GD(Node,'firstChild'),NX=GD(Node,'nextSibling');"

/* Page-check helper (JS source, var statements; needs JS_SAFE_DOM before
 * it): TX(x) is x's text as innerText gives it, with the text of every
 * secret field in it (the one rule, SNAP_JS_SECRET_KIND as SK, or a field
 * the walker ever saw secret in this document: __cdpgateWalk.sec; IS(z)
 * says which) replaced by "[secret]", and "[secret]" whole when x is or is
 * inside such a field: a contenteditable's text, a select's options (red
 * team s12, W3). An element holding no secret field gives its own
 * innerText; one that holds one is read child by child (text nodes,
 * rendered elements, blocks apart). Properties are read through the
 * prototypes (a form's named controls cannot shadow them).
 * Runs: inside the scripts below that use it (not on its own). */
#define JS_SAFE_TEXT \
    "var SK=" SNAP_JS_SECRET_KIND ",WS=globalThis.__cdpgateWalk,EP=Element.prototype," \
    "IT0=GD(HTMLElement,'innerText'),PE=GD(Node,'parentElement');" \
    "WS=WS&&WS.d===document&&WS.sec;var IS=z=>SK(z)>0||!!(WS&&WS.has(z))," \
    "HS=x=>IS(x)||[].some.call(EP.querySelectorAll.call(x,'*'),IS)," \
    "T0=x=>{if(IS(x))return' [secret] ';if(!HS(x))return x instanceof HTMLElement?" \
    "IT0.call(x):'';var o='';for(var c=FC.call(x);c;c=NX.call(c))if(c instanceof Text)" \
    "o+=c.data;else if(c instanceof Element&&EP.checkVisibility.call(c))o+=/^inline/.test(" \
    "getComputedStyle(c).display)?T0(c):' '+T0(c)+' ';return o;}," \
    "TX=x=>{if(!x)return'';for(var p=x;p;p=PE.call(p))if(IS(p))return'[secret]';return T0(x);};"

/* The words that may name a field x (the in-script helper L, one copy for
 * the two scripts below): its labels, aria-labelledby, title, placeholders,
 * name and id, the text just before it (a "To:" beside a contenteditable),
 * and its group's label or legend. Needs the script's N, A and IT (an
 * element's text: innerText, or TX where no secret text may go). */
#define JS_FIELD_WORDS \
    "var L=function(x){var s=[],d=x.ownerDocument;if(x.labels)for(var i=0;i<x.labels.length;" \
    "i++)s.push(IT(x.labels[i]));(A(x,'aria-labelledby')).split(/\\s+/).forEach(" \
    "function(id){var l=id&&d.getElementById(id);if(l)s.push(IT(l));});" \
    "s.push(A(x,'title'),A(x,'aria-placeholder'),A(x,'data-placeholder'),A(x,'aria-label')," \
    "A(x,'name'),x.id||'',A(x,'placeholder'));var p=x.previousElementSibling;" \
    "if(p&&!p.matches('input,select,textarea,button'))s.push(N(IT(p),40));" \
    "var g=x.parentElement&&x.parentElement.closest('[aria-label],[role=group],fieldset');" \
    "if(g)s.push(A(g,'aria-label'),g.tagName==='FIELDSET'&&g.querySelector('legend')?" \
    "IT(g.querySelector('legend')):'');return s.join(' ');};"

/* The element a click on e acts on: e when it is a form control, else its
 * nearest clickable ancestor (a link, button, summary, label or ARIA
 * widget; across shadow roots, closed ones too: cdpgate's world holds the
 * root it walks from) when there is one. A cell or a span inside a row
 * button is a click on that button, and is judged by the button's name
 * (up: e was such an ancestor; its aria-label goes into the text). */
#define JS_CLICKED \
    "var up=false;" \
    "if(!/^(INPUT|SELECT|TEXTAREA|BUTTON|OPTION)$/.test(e.tagName)&&!e.isContentEditable){" \
    "var CK='a[href],area[href],button,summary,label,[role=button],[role=link],[role=menuitem]," \
    "[role=menuitemcheckbox],[role=menuitemradio],[role=tab],[role=option],[role=checkbox]," \
    "[role=radio],[role=switch],[role=treeitem]';" \
    "for(var x=e,i=0;x&&i<256;i++){if(x.matches&&x.matches(CK)){up=x!==e;e=x;break;}" \
    "x=x.parentElement||(x.getRootNode&&x.getRootNode().host)||null;}}"

/* The form f an action on e submits, as the browser submits it: the
 * submitter is e when e is a submit button, else (Enter in a field, type
 * with submit) the form's default button, the first submit button (button
 * or input of type submit or image) associated with f in tree order, which
 * may sit outside the form element (form=id), as Chromium's implicit
 * submission clicks it (HTMLFormElement::SubmitImplicitly). The action and
 * method are the submitter's formaction/formmethod when it has them, else
 * the form's (an empty action is the document's URL; a method other than
 * post or dialog is get), and fs the submitter's names. A form's named
 * control that shadows a property it calls (<input name=getAttribute>)
 * makes it throw: the gate refuses. Sets r.sub (e is a submit button, by
 * its type property: <button type=bogus> is one), r.fa, r.fm, r.fs. */
#define JS_FIND_SUBMITTER \
    "var S=/^(submit|image)$/,sm=S.test(e.type)?e:null," \
    "q=e.getRootNode().querySelectorAll('button,input');" \
    "for(var i=0;!sm&&i<q.length;i++)if(q[i].form===f&&S.test(q[i].type))sm=q[i];"

#define JS_SUBMITTER \
    "if(f){" JS_FIND_SUBMITTER "r.sub=sm===e;" \
    "var H=function(k){return sm&&sm.hasAttribute('form'+k)?A(sm,'form'+k):A(f,k);}," \
    "fa=H('action'),m=H('method').toLowerCase();r.fm=/^(post|dialog)$/.test(m)?m:'get';" \
    "try{r.fa=N(fa?new URL(fa,e.baseURI).href:document.URL,400);}catch(x){r.fa='';}" \
    "if(sm)r.fs=N([A(sm,'aria-label'),IT(sm),sm.value,sm.alt,sm.title].join(' '));}"

/* What the gate needs of an element (plain values back): the element an
 * action on the node acts on (JS_CLICKED, a label's control).
 * Runs: on a node, the element of a gated action (policy.c, and
 * pipelined by the actions). A template: snap_js_facts_fn, a JSON number
 * (the longest string read whole, SNAP_JS_FACTS_WHOLE), snap_js_facts_tail
 * (two literals: one would pass C's 4,095-byte cap). Returns: {tag, type,
 * ac, im?, ml?, field, text, fa?, fm?, fs?, sub?, href?, dl?, row?, dlg?,
 * lbl, nm?, nmx?, via?}: row, the table row, list item or card it is in,
 * whole; dlg, the dialog (a dialog or alertdialog, an aria-modal, a fixed
 * overlay, a "modal", "dialog" or "popup" class) it is in: its name,
 * description and text, whole; im and ml, its inputmode and maxlength;
 * nm, every source of the element's name (aria-label, aria-labelledby,
 * labels, title, alt, its text, the alt, title or aria-label of what is
 * inside it and the value of a plain field inside it, the strings and
 * attr() values of its and its descendants' CSS content), whole; nmx,
 * "long" or "many" when they (or the row or dialog) were too long or too
 * many to give (every value is whole to 65,536 characters unless its cut
 * is given); via, the element is another one than the node (a control,
 * not a text's plain parent nor a label that labels nothing): policy.c
 * gates the action under its name. No fact carries a secret field's text:
 * text, row, dlg, lbl, fs and the name sources are read through TX
 * (JS_SAFE_TEXT: "[secret]" for it; red team s12, W3). */
const char snap_js_facts_fn[] =
    "function(){var n0=this.nodeType===1?this:this.parentElement,e=n0;if(!e)return{};"
    JS_CLICKED
    "if(e.tagName==='LABEL'&&e.control)e=e.control;"
    "var N=(s,n)=>String(s||'').replace(/\\s+/g,' ').trim().slice(0,n||65537);"
    "var A=(x,k)=>x.getAttribute?x.getAttribute(k)||'':'';" JS_SAFE_DOM JS_SAFE_TEXT "var IT=TX;"
    "var t=N(A(e,'type')).toLowerCase(),tag=e.tagName.toLowerCase();"
    "var r={tag:tag,type:t,ac:N(A(e,'autocomplete')).toLowerCase(),"
    "im:N(A(e,'inputmode')).toLowerCase(),"
    "field:N(A(e,'name')+' '+(e.id||'')+' '+A(e,'placeholder')+' '+A(e,'aria-label')),"
    "text:N(tag==='input'?(/^(submit|button|reset|image)$/.test(t)?e.value:''):"
    "tag==='textarea'||tag==='select'?'':TX(e))};if(e.maxLength>0)r.ml=e.maxLength;"
    "if(up&&A(e,'aria-label'))r.text=N(A(e,'aria-label')+' '+r.text);"
    "var f=e.form||e.closest('form');"
    JS_SUBMITTER
    "var l=e.closest('a[href],area[href]');if(l&&typeof l.href==='string'&&"
    "!e.closest('button,input,select,textarea,[contenteditable]')){"
    "r.href=l.href.slice(0,2000);r.dl=l.hasAttribute('download');}"
    "var W=";
const char snap_js_facts_tail[] =
    ";var lg=s=>{if(s.length>W)r.nmx='long';return s;};"
    /* Words that may name a recipient field: labels, aria-labelledby, title,
     * placeholders, the text just before the field (a "To:" beside a
     * contenteditable), and for an option the control it belongs to. */
    JS_FIELD_WORDS
    "var lb=L(e),ro=A(e,'role');if(tag==='option'||/^(option|menuitemradio|treeitem)$/.test(ro)){"
    "var lst=e.closest('select,datalist,[role=listbox],[role=menu],[role=tree]');"
    "if(lst){lb+=' '+L(lst);var id=lst.id;var own=id&&(lst.ownerDocument.querySelector("
    "'[aria-controls~=\"'+CSS.escape(id)+'\"],[aria-owns~=\"'+CSS.escape(id)+'\"]'));"
    "if(!own&&tag==='option'&&id)own=lst.ownerDocument.querySelector('[list=\"'+"
    "CSS.escape(id)+'\"]');if(own)lb+=' '+L(own);}}"
    "r.lbl=N(lb,300);"
    /* Every name source whole, for the classifier (the prompt cuts what it
     * shows): past 256 distinct sources or 65,536 characters in one, nmx
     * says so and policy.c refuses (red team s11, S9). */
    "var NS=[],ad=s=>{s=N(s);if(s.length>W)r.nmx='long';else if(s&&!NS.includes(s)){"
    "if(NS[255])r.nmx='many';else NS.push(s);}};"
    "var rt=e.getRootNode(),gd=rt.getElementById?rt:e.ownerDocument;"
    "A(e,'aria-labelledby').split(/\\s+/).forEach(id=>{var l=id&&gd.getElementById(id);"
    "if(l)ad(HS(l)?TX(l):l.innerText||l.textContent);});"
    "if(e.labels)e.labels.forEach(x=>ad(TX(x)));ad(r.text);"
    /* Of the element and of everything in it: alt, aria-label, title, an
     * SVG <title>, a plain field's value (a read-only input showing "Delete
     * account": red team s12, G5; never a secret field's, by the one
     * secret-field rule), and each quoted string of its CSS
     * content and the attribute an attr() there reads (counters say
     * nothing). */
    "var cs=x=>{if(x.tagName=='title')ad(x.textContent);"
    "['aria-label','title','alt'].forEach(k=>ad(A(x,k)));"
    "if(x!==e&&/^(INPUT|TEXTAREA)$/.test(x.tagName)&&x.type!=='hidden'&&!IS(x))ad(x.value);"
    "['::before','::after'].forEach(p=>getComputedStyle(x,p).content.replace("
    "/\"((?:[^\"\\\\]|\\\\.)*)\"|attr\\(\\s*([^\\s),]+)/g,(m,q,k)=>"
    "ad(k?A(x,k):q.replace(/\\\\(.)/g,'$1'))));},"
    "D=e.querySelectorAll('*');cs(e);if(D.length>4096)r.nmx='many';else D.forEach(cs);"
    "if(NS.length)r.nm=NS;"
    /* The context a generic button ("OK", "Yes") is judged by: its row,
     * its dialog (red team s12, G2, G7), whole. */
    "var row=e.closest('tr,li,[role=row],[role=listitem],article');"
    "if(row)r.row=lg(N(TX(row)));"
    "var dg=e.closest('dialog,[role=dialog],[role=alertdialog],[aria-modal=true]');"
    "for(var x=e.parentElement;!dg&&x&&x!==e.ownerDocument.body;x=x.parentElement)"
    "if(getComputedStyle(x).position==='fixed'||/modal|dialog|popup/i.test(A(x,'class')))dg=x;"
    "if(dg){var ds=[A(dg,'aria-label')];['aria-labelledby','aria-describedby'].forEach(k=>"
    "A(dg,k).split(/\\s+/).forEach(id=>{var l=id&&gd.getElementById(id);if(l)ds.push("
    "TX(l));}));ds.push(TX(dg));r.dlg=lg(N(ds.join(' ')));}"
    "if(e.tagName!=='LABEL'&&(e!==n0||(this!==n0&&(/^(INPUT|SELECT|TEXTAREA|BUTTON|OPTION)$/"
    ".test(e.tagName)||e.isContentEditable||(CK&&e.matches(CK))))))r.via=true;"
    "return r;}";

/* The element an action on the node acts on (as snap_js_facts_fn finds
 * it), as an object for its backend id and accessibility node.
 * Runs: on a node whose facts said via (policy.c). Returns: the element. */
const char snap_js_acted_fn[] =
    "function(){var e=this.nodeType===1?this:this.parentElement;if(!e)return null;"
    JS_CLICKED
    "if(e.tagName==='LABEL'&&e.control)e=e.control;return e;}";

/* What the form (or compose area) of an element holds that may name a
 * recipient, read back for the gate before a consequential action
 * (gate_present): every field with a value (hidden inputs too; the options
 * a select has chosen; a contenteditable's text and the addresses on the
 * elements inside it; never a password, one-time-code or card field),
 * with what names it, and every address on an element beside the fields
 * (a chip: in any attribute, or its own text), not inside a field (a
 * message body) nor a suggestion list the page hides. The container: the
 * element's form, else its dialog, else the nearest ancestor holding
 * another field. Bounded: 2000 fields, 5000 elements, 256 entries; more
 * and cut is set (the gate refuses).
 * Runs: on a node, the element of a consequential action (policy.c);
 * arguments: the fields noted ever secret in its document (a password
 * field the page made type=text since), skipped like a password field.
 * A hidden input is named by its name and id only (no text near it).
 * Returns: {p: [{c?, f, l, n, t, ac, im, v}], cut} (im: its inputmode, for
 * the amount the prompt shows). */
const char snap_js_present_fn[] =
    "function(){var K=[].slice.call(arguments),e=this.nodeType===1?this:this.parentElement;"
    "if(!e)return{p:[]};"
    "if(e.tagName==='LABEL'&&e.control)e=e.control;"
    "var N=(s,n)=>{return String(s||'').replace(/\\s+/g,' ').trim().slice(0,n||160);};"
    "var A=(x,k)=>{return x.getAttribute?x.getAttribute(k)||'':'';};"
    "var F='input,textarea,select,[contenteditable]',IT=x=>x.innerText;" JS_SAFE_DOM
    "var c=e.form||e.closest('form,dialog,[role=dialog],[role=form]');"
    "for(var p=e.parentElement,i=0;!c&&p&&i<16;p=p.parentElement,i++){"
    "var q=p.querySelectorAll(F);for(var j=0;j<q.length;j++)if(q[j]!==e&&!q[j].contains(e)){"
    "c=p;break;}}"
    "if(!c)return{p:[]};"
    "var out=[],cut=0,seen={};"
    "var add=o=>{if(out.length>=256){cut=1;return;}out.push(o);};"
    "var R=/[^\\s,;<>()\\[\\]\"']*[@\\uFF20\\uFE6B][^\\s,;<>()\\[\\]\"']*/g;"
    "var T=s=>{return String(s||'').slice(0,4000).match(R)||[];};"
    "var chip=s=>{T(s).forEach(t=>{if(!seen[t]){seen[t]=1;add({c:true,v:t});}});};"
    JS_FIELD_WORDS
    "var NM=x=>{var s=A(x,'aria-label'),d=x.ownerDocument;if(!s)s=A(x,'aria-labelledby')"
    ".split(/\\s+/).map(id=>{var l=id&&d.getElementById(id);return l?l.innerText:'';})"
    ".join(' ');if(!N(s)&&x.labels)s=[].map.call(x.labels,l=>{return l.innerText;})"
    ".join(' ');if(!N(s))s=A(x,'title')||A(x,'placeholder');return N(s);};"
    "var fl=[].slice.call(c.querySelectorAll(F));[].forEach.call(ELS(c),"
    "x=>{if(fl.indexOf(x)<0)fl.push(x);});if(fl.length>2000){cut=1;fl=fl.slice(0,2000);}"
    "var roots=[];"
    "fl.forEach(x=>{var tag=x.tagName.toLowerCase(),t=A(x,'type').toLowerCase(),"
    "ac=A(x,'autocomplete').toLowerCase();"
    "if(tag!=='input'&&tag!=='textarea'&&tag!=='select'){if(!x.isContentEditable||"
    "(x.parentElement&&x.parentElement.isContentEditable))return;}"
    "if(tag==='input'&&/^(submit|button|reset|image|file|password|checkbox)$/.test(t))return;"
    "if(/password|one-time-code|cc-/.test(ac)||K.indexOf(x)>=0)return;"
    "if(tag==='input'&&/^(checkbox|radio)$/.test(t)&&!x.checked)return;"
    "if(tag!=='input')roots.push(x);"
    "var o={f:N(A(x,'name')+' '+(x.id||'')+' '+A(x,'placeholder')+' '+A(x,'aria-label')),"
    "l:N(t==='hidden'?A(x,'name')+' '+(x.id||''):L(x),300),n:NM(x),t:t,ac:N(ac),"
    "im:N(A(x,'inputmode'),20).toLowerCase()};"
    "var vs=[];if(tag==='select')[].forEach.call(x.selectedOptions||[],op=>{"
    "vs.push(op.label);if(op.value!==op.label)vs.push(op.value);});"
    "else if(tag==='input'||tag==='textarea')vs.push(x.value);"
    "else{var v=x.innerText,ex=[];[].forEach.call(x.querySelectorAll('*'),y=>{"
    "if(ex.length<64)[].forEach.call(y.attributes,at=>{T(at.value).forEach(k=>{"
    "ex.push(k);});});});vs.push(v+(ex.length?', '+ex.join(', '):''));}"
    "vs.forEach(v=>{v=String(v||'').slice(0,1100);if(N(v))add({...o,v:v});});});"
    "var vis=x=>{return x.checkVisibility?x.checkVisibility():"
    "x.getClientRects().length>0;};"
    "var n=0,w=document.createTreeWalker(c,NodeFilter.SHOW_ELEMENT,{acceptNode:x=>{"
    "if(roots.indexOf(x)>=0||/^(INPUT|SCRIPT|STYLE|TEMPLATE|NOSCRIPT)$/.test(x.tagName))"
    "return NodeFilter.FILTER_REJECT;"
    "if(x.matches('[role=listbox],[role=menu],[role=tooltip],datalist')&&!vis(x))"
    "return NodeFilter.FILTER_REJECT;return NodeFilter.FILTER_ACCEPT;}});"
    "for(var x=w.currentNode;x;x=w.nextNode()){if(++n>5000){cut=1;break;}"
    "var at=AT.call(x);for(var i=0;i<at.length&&i<64;i++)chip(at[i].value);"
    "for(var k=FC.call(x);k;k=NX.call(k))if(k.nodeType===3)chip(k.data);}"
    "return{p:out,cut:!!cut};}";

/* The submitter of the form an action on the node submits (the submit
 * button itself, else the form's default button: JS_FIND_SUBMITTER), when
 * it has a name: the browser sends its name=value with the fields, so the
 * recipient read-back checks it as one more field (snap_js_present_fn
 * reads the fields; a <button form=id> outside the form and an input of
 * type submit are not among them).
 * Runs: on a node, the element of a consequential action (policy.c).
 * Returns: {f, n, v} (its name and id, what names it, its value), or {}. */
const char snap_js_submitter_fn[] =
    "function(){var e=this.nodeType===1?this:this.parentElement;if(!e)return{};"
    "if(e.tagName==='LABEL'&&e.control)e=e.control;"
    "var f=e.form||e.closest('form');if(!f)return{};" JS_FIND_SUBMITTER
    "var N=function(s){return String(s||'').replace(/\\s+/g,' ').trim().slice(0,160);};"
    "if(!sm||!N(sm.name))return{};return{f:N(sm.name+' '+sm.id),"
    "n:N(sm.getAttribute('aria-label')||sm.innerText||sm.alt),v:String(sm.value).slice(0,1100)};}";


_Static_assert(sizeof snap_js_scroll_expr + 16 <= SNAP_JS_SCROLL_CAP, "snap_js_scroll_expr");
_Static_assert(sizeof snap_js_ls_get + 40 <= SNAP_JS_LS_GET_CAP, "snap_js_ls_get");

/* Every page script, for the sink (sink.c): a script that is not listed here
 * is refused. WRITE: it changes the page. */
const snap_js snap_page_scripts[] = {
    /* the actions (act_*.c) */
    {snap_js_state_fn, NULL, SNAP_JS_READ},
    {snap_js_contains_fn, NULL, SNAP_JS_READ},
    {snap_js_cover_fn, NULL, SNAP_JS_READ},
    {snap_js_observe_fn, NULL, SNAP_JS_READ},
    {snap_js_observe_doc_expr, NULL, SNAP_JS_READ},
    {snap_js_collect_fn, NULL, SNAP_JS_READ},
    {snap_js_unobserve_fn, NULL, SNAP_JS_READ},
    {snap_js_after_fn, NULL, SNAP_JS_READ},
    {snap_js_pick_option_fn, NULL, SNAP_JS_WRITE},
    {snap_js_prep_type_fn, NULL, SNAP_JS_WRITE},
    {snap_js_value_fn, NULL, SNAP_JS_READ},
    {snap_js_focus_on_fn, NULL, SNAP_JS_READ},
    {snap_js_focus_fn, NULL, SNAP_JS_WRITE},
    {snap_js_sf_known_fn, NULL, SNAP_JS_READ},
    {snap_js_select_fn, NULL, SNAP_JS_WRITE},
    {snap_js_find_option_fn, NULL, SNAP_JS_READ},
    {snap_js_select_pick_fn, NULL, SNAP_JS_READ},
    {snap_js_option_words_fn, NULL, SNAP_JS_READ},
    {snap_js_chosen_fn, NULL, SNAP_JS_READ},
    {snap_js_aria_selected_fn, NULL, SNAP_JS_READ},
    {snap_js_file_input_fn, NULL, SNAP_JS_READ},
    {snap_js_raf2_expr, NULL, SNAP_JS_READ},
    {snap_js_frame_expr, NULL, SNAP_JS_READ},
    {snap_js_scroll_frame_expr, NULL, SNAP_JS_READ},
    {snap_js_in_view_expr, NULL, SNAP_JS_READ},
    {snap_js_value_select_fn, NULL, SNAP_JS_READ},
    {snap_js_sf_expr, NULL, SNAP_JS_READ},
    {snap_js_focus_expr, NULL, SNAP_JS_READ},
    {snap_js_focus_deep_expr, NULL, SNAP_JS_READ},
    {snap_js_focus_same_fn, NULL, SNAP_JS_READ},
    {snap_js_shot_secrets_fn, NULL, SNAP_JS_READ},     /* act_shot_mask.c */
    {snap_js_shot_is_secret_fn, NULL, SNAP_JS_READ},   /* act_shot_mask.c */
    {snap_js_shot_field_fn, NULL, SNAP_JS_READ},       /* act_shot_mask.c, isolated world only */
    {snap_js_shot_drawn_expr, NULL, SNAP_JS_READ},     /* act_shot_mask.c */
    {snap_js_shot_view_fn, NULL, SNAP_JS_READ},        /* act_shot_view.c, isolated world only */
    {SCROLL_SRC "(", ")", SNAP_JS_WRITE | SNAP_JS_SCROLL},
    {SCROLL_BACK_SRC, ")", SNAP_JS_WRITE | SNAP_JS_SCROLL},
    /* the agent (agent*.c) */
    {snap_js_connected_fn, NULL, SNAP_JS_READ},
    {snap_js_redirect_expr, NULL, SNAP_JS_READ},
    {snap_js_mut_expr, NULL, SNAP_JS_READ},    /* isolated world only */
    /* the snapshot (observe_walk.c) */
    {snap_js_walk_def1, NULL, SNAP_JS_READ},   /* isolated world only */
    {snap_js_walk_def2, NULL, SNAP_JS_READ},   /* isolated world only */
    {snap_js_walk_def3, NULL, SNAP_JS_READ},   /* isolated world only */
    {snap_js_walk_def4, NULL, SNAP_JS_READ},   /* isolated world only */
    {snap_js_walk_expr, NULL, SNAP_JS_READ},   /* isolated world only */
    {snap_js_walk_next_expr, NULL, SNAP_JS_READ}, /* isolated world only */
    {snap_js_walk_ref_fn, NULL, SNAP_JS_READ}, /* isolated world only */
    {snap_js_walk_sec_fn, NULL, SNAP_JS_READ}, /* isolated world only */
    {snap_js_walk_leak_fn, NULL, SNAP_JS_READ}, /* isolated world only */
    {snap_js_walk_mask_fn, NULL, SNAP_JS_READ}, /* isolated world only */
    {snap_js_walk_id_fn, NULL, SNAP_JS_READ},  /* isolated world only */
    {snap_js_walk_box_expr, NULL, SNAP_JS_READ}, /* isolated world only */
    {snap_js_walk_sv_expr, NULL, SNAP_JS_READ},  /* isolated world only */
    {snap_js_secret_values_expr, NULL, SNAP_JS_READ}, /* isolated world only */
    /* browser contexts and login (session.c) */
    {snap_js_wall, NULL, SNAP_JS_READ},
    {snap_js_ls_get, NULL, SNAP_JS_READ},
    {snap_js_ls_keys, NULL, SNAP_JS_READ},
    {snap_js_ls_set_prefix, snap_js_ls_set_suffix, SNAP_JS_WRITE},
    /* the gate glue (policy.c) */
    {snap_js_facts_fn, snap_js_facts_tail, SNAP_JS_READ},
    {snap_js_acted_fn, NULL, SNAP_JS_READ},
    {snap_js_present_fn, NULL, SNAP_JS_READ},
    {snap_js_submitter_fn, NULL, SNAP_JS_READ},
    /* recording (record.c) */
    {snap_js_record_fn, NULL, SNAP_JS_READ},    /* isolated world only */
    {NULL, NULL, 0},
};
