/*
 * viewer.c — the live view's page (issue 15, point 3): one HTML document
 * with its style and script inline, nothing loaded from elsewhere, under a
 * Content-Security-Policy that allows only this response's nonce for the
 * script and the style, frames as blob: images and a WebSocket to this
 * server (live_viewer_page, served by server.c).
 *
 * What the script does: opens its WebSocket at "ws" relative to the page
 * (ws://HOST/v/ID/ws: every URL of the view is relative to the link's
 * path), offering LIVE_WS_PROTOCOL and the nonce this response carries
 * (WSN: the server drew it for this page; the socket uses it up, a
 * cookie alone never opens the socket); shows each binary message
 * (a JPEG frame) and acknowledges it ({"t":"ack"}, once per frame: when
 * shown, when it failed to decode, or when a newer one replaced it before
 * it was shown; the server sends the latest frame while fewer than
 * LIVE_FRAME_WINDOW are unacknowledged); shows the text messages (the
 * access message: its role, who can watch and control, when links expire,
 * counted down in the page; the URL and origin, who holds control, the
 * tab list (each tab's title and origin, the shown one marked), a click
 * on a tab sent as {"t":"tab","id"}); sends the person's input as
 * JSON text messages: mouse (moves coalesced to one per animation frame),
 * wheel, keys (key, code, modifiers: 1 alt, 2 ctrl, 4 meta, 8 shift),
 * paste as text, IME compositions ({"t":"ime","text","sel"}) and their
 * commit as text, all through a hidden textarea a press on the frame
 * focuses (at the pointer, so an IME's candidates show there); and
 * {"t":"handback"} from the button. Coordinates are in
 * the frame's pixels. A watcher's page (RO) shows "watching (read-only)"
 * and sends nothing but acknowledgements. It keeps nothing and sends
 * nothing anywhere else.
 */
#include "live/live_int.h"

#include <stdio.h>
#include <string.h>

static const char PAGE_HEAD[] =
    "<!doctype html><html><head><meta charset=\"utf-8\"><title>cdpgate live view</title>"
    "<meta name=\"referrer\" content=\"no-referrer\"><style nonce=\"%s\">"
    "body{margin:0;font:14px system-ui,sans-serif;background:#222;color:#eee}"
    "#bar{display:flex;gap:1em;align-items:center;padding:6px 10px;background:#333}"
    "#url{flex:1;overflow:hidden;white-space:nowrap;text-overflow:ellipsis}"
    "#me,#org{font-weight:bold}#tabs{display:flex;gap:4px;padding:4px 10px;background:#2a2a2a;"
    "overflow-x:auto}#tabs button{max-width:14em;overflow:hidden;white-space:nowrap;"
    "text-overflow:ellipsis;background:#444;color:#eee;border:0;padding:2px 8px}"
    "#tabs button.cur{background:#777;font-weight:bold}"
    "#me{font-weight:bold}#acc{padding:2px 10px;background:#2a2a2a;color:#bbb;font-size:12px}"
    "#v{display:block;max-width:100%%;outline:none}button{font:inherit}"
    "#ime{position:fixed;left:0;top:0;width:2px;height:1.2em;opacity:0;border:0;padding:0;"
    "margin:0;resize:none;overflow:hidden;pointer-events:none}</style></head>"
    "<body><div id=\"bar\"><span id=\"me\"></span><span id=\"who\">connecting</span>"
    "<span id=\"org\"></span><span id=\"url\"></span>"
    "<button id=\"back\">Hand back to the agent</button></div>"
    "<div id=\"acc\"></div><div id=\"tabs\"></div>"
    "<img id=\"v\" alt=\"the browser's tab\"><textarea id=\"ime\" autocomplete=\"off\" "
    "autocapitalize=\"off\" spellcheck=\"false\" aria-label=\"keyboard input\"></textarea>"
    "<script nonce=\"%s\">"
    "'use strict';const RO=%s,WSN='%s';";

static const char PAGE_SCRIPT[] =
    "const $=i=>document.getElementById(i);"
    "const v=$('v'),who=$('who'),url=$('url'),accEl=$('acc'),ta=$('ime'),tabs=$('tabs');"
    "$('me').textContent=RO?'watching (read-only)':'you can take control';"
    "if(RO)$('back').hidden=true;"
    "const ws=new WebSocket(new URL('ws',location.href).href.replace(/^http/,'ws'),"
    "['" LIVE_WS_PROTOCOL "',WSN]);ws.binaryType='blob';"
    "let cur=null,move=null,raf=0,acc=null;"
    "function send(m){if(ws.readyState===1)ws.send(JSON.stringify(m));}"
    "function input(m){if(!RO)send(m);}"
    "function fmt(s){s=Math.max(0,Math.round(s));"
    "return Math.floor(s/60)+' min '+String(s%60).padStart(2,'0')+' s';}"
    "function showAcc(){if(!acc)return;const gone=(Date.now()-acc.at)/1000,"
    "c=acc.control,w=acc.watch,left=e=>e-gone;let t;"
    "if(c.opened)t='control link: opened'+(c.expires===null?', until the hand-back':"
    "', the session ends in '+fmt(left(c.expires)));"
    "else t=left(c.expires)>0?'control link: not opened yet, expires in '+"
    "fmt(left(c.expires)):'control link: expired';"
    "t+=c.viewing?' (a person is viewing)':'';"
    "t+=' \\u00b7 read-only watchers: '+w.watching+' watching';"
    "if(w.links)t+=', '+w.opened+' of '+w.links+' watch links opened';"
    "if(w.expires!==null)t+=', unopened ones expire in '+fmt(left(w.expires));"
    "accEl.textContent=t;}"
    "setInterval(showAcc,1000);"
    "function onText(m){if(m.t==='access'){acc=m;acc.at=Date.now();showAcc();return;}"
    "if(m.t==='url'){url.textContent=m.url;$('org').textContent=m.origin;return;}"
    "if(m.t==='control'){who.textContent=m.who==='human'?'the person has control':"
    "'the agent has control';return;}"
    "if(m.t==='tabs')showTabs(m);}"
    /* the tab list: titles as text; a click asks the host for that tab */
    "function showTabs(m){tabs.textContent='';for(const t of m.tabs){"
    "const b=document.createElement('button');"
    "b.textContent=(t.title||'(untitled)')+(t.origin?' \\u00b7 '+t.origin:'');"
    "b.title=t.url||t.origin;if(t.current)b.className='cur';"
    "if(RO)b.disabled=true;else b.onclick=()=>input({t:'tab',id:t.id});tabs.append(b);}"
    "if(m.more){const s=document.createElement('span');s.textContent='+'+m.more;"
    "tabs.append(s);}}"
    /* frames: one decoding (ld) and at most one waiting (nx, the newest;
     * one it replaces is acknowledged unseen): each frame acknowledged
     * exactly once, when shown, failed or replaced, so the server's window
     * (two unacknowledged) never sticks */
    "let ld=null,nx=null;"
    "function show(b){ld=URL.createObjectURL(b);v.src=ld;}"
    "function shown(ok){const u=ld;ld=null;if(ok){if(cur)URL.revokeObjectURL(cur);cur=u;}"
    "else URL.revokeObjectURL(u);send({t:'ack'});if(nx){const b=nx;nx=null;show(b);}}"
    "v.onload=()=>shown(true);v.onerror=()=>shown(false);"
    "ws.onmessage=e=>{if(typeof e.data==='string'){onText(JSON.parse(e.data));return;}"
    "if(!ld){show(e.data);return;}if(nx)send({t:'ack'});nx=e.data;};"
    "ws.onclose=()=>{who.textContent='disconnected';};"
    "function pt(e){const r=v.getBoundingClientRect();"
    "return{x:Math.round((e.clientX-r.left)*v.naturalWidth/r.width),"
    "y:Math.round((e.clientY-r.top)*v.naturalHeight/r.height)};}"
    "function mods(e){return(e.altKey?1:0)|(e.ctrlKey?2:0)|(e.metaKey?4:0)|(e.shiftKey?8:0);}"
    "function flush(){if(move){input(move);move=null;}}";

/* the person's input (not on a watcher's page) */
static const char PAGE_INPUT[] =
    "if(!RO){"
    "v.addEventListener('mousemove',e=>{move=Object.assign({t:'mouse',type:'move',"
    "b:e.buttons,m:mods(e)},pt(e));"
    "if(!raf)raf=requestAnimationFrame(()=>{raf=0;flush();});});"
    /* a press focuses the hidden textarea at the pointer: keys, IME and
     * paste go there, and an IME shows its candidates where the person
     * types */
    "for(const [ev,ty] of [['mousedown','down'],['mouseup','up']])"
    "v.addEventListener(ev,e=>{e.preventDefault();ta.style.left=e.clientX+'px';"
    "ta.style.top=e.clientY+'px';ta.focus();flush();"
    "input(Object.assign({t:'mouse',type:ty,button:e.button,b:e.buttons,m:mods(e),"
    "n:e.detail},pt(e)));});"
    "v.addEventListener('wheel',e=>{e.preventDefault();flush();"
    "input(Object.assign({t:'wheel',dx:e.deltaX,dy:e.deltaY,m:mods(e)},pt(e)));},"
    "{passive:false});"
    "v.addEventListener('contextmenu',e=>e.preventDefault());"
    "function paste(e){return(e.ctrlKey||e.metaKey)&&(e.key==='v'||e.key==='V');}"
    /* keys: sent as they are, the default prevented (nothing lands in the
     * textarea, nothing doubles); not while an IME composes (229), not a
     * dead key (its composition brings the character), not the paste
     * shortcut (the paste event brings the text) */
    "for(const [ev,ty] of [['keydown','down'],['keyup','up']])"
    "ta.addEventListener(ev,e=>{if(e.isComposing||e.keyCode===229||e.key==='Dead'||paste(e))"
    "return;e.preventDefault();"
    "input({t:'key',type:ty,key:e.key,code:e.code,m:mods(e),rep:e.repeat});});"
    /* IME: the composition as it changes, then the commit as text */
    "ta.addEventListener('input',e=>{if(e.isComposing){input({t:'ime',text:ta.value,"
    "sel:[ta.selectionStart,ta.selectionEnd]});return;}"
    "if(ta.value)input({t:'text',text:ta.value});ta.value='';});"
    "ta.addEventListener('compositionend',e=>{input(e.data?{t:'text',text:e.data}:"
    "{t:'ime',text:'',sel:[0,0]});ta.value='';});"
    "document.addEventListener('paste',e=>{e.preventDefault();"
    "const s=e.clipboardData.getData('text/plain');if(s)input({t:'text',text:s});});"
    "$('back').onclick=()=>input({t:'handback'});ta.focus();}";

static const char PAGE_TAIL[] = "</script></body></html>";

int live_viewer_page(char *out, size_t cap, const char *nonce, const char *ws_nonce,
                     bool watch)
{
    if (strspn(ws_nonce, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        != strlen(ws_nonce))
        return -1;
    int n = snprintf(out, cap, PAGE_HEAD, nonce, nonce, watch ? "true" : "false", ws_nonce);
    if (n < 0 || (size_t)n + sizeof PAGE_SCRIPT + sizeof PAGE_INPUT + sizeof PAGE_TAIL > cap)
        return -1;
    memcpy(out + n, PAGE_SCRIPT, sizeof PAGE_SCRIPT - 1);
    n += (int)sizeof PAGE_SCRIPT - 1;
    memcpy(out + n, PAGE_INPUT, sizeof PAGE_INPUT - 1);
    n += (int)sizeof PAGE_INPUT - 1;
    memcpy(out + n, PAGE_TAIL, sizeof PAGE_TAIL);
    return n + (int)sizeof PAGE_TAIL - 1;
}
