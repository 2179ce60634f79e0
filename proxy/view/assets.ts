/**
 * The view's two assets, shipped in the package as strings (nothing is fetched from outside): the
 * stylesheet and the small script that adds live updates, folding and the diff toggles to pages
 * that work without it. Served under content-hashed names, cached for good; the export inlines them.
 * Invariant: the script only rearranges markup the server rendered; it builds none from data.
 */
import { createHash } from 'node:crypto'

export const CSS = `
:root{--fg:#1d232b;--muted:#5d6975;--bg:#fff;--line:#e3e7eb;--soft:#f5f7f9;--accent:#2557a7;
--read:#2e9d5b;--write:#e08a1e;--input:#c2483d;--output:#4f6fd1;--cost:#7a3fb0;--bad:#b3261e}
@media (prefers-color-scheme:dark){:root{--fg:#e4e8ec;--muted:#9aa6b2;--bg:#15191e;--line:#2b3139;
--soft:#1d232a;--accent:#8cb4ff;--bad:#ff8a80}}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
header{padding:10px 20px;border-bottom:1px solid var(--line);display:flex;gap:16px;align-items:baseline}
header .brand{font-weight:600}
main{padding:16px 20px 60px;max-width:1400px}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
h1{font-size:20px;margin:4px 0 12px}h2{font-size:16px;margin:24px 0 8px}
.muted{color:var(--muted)}.bad{color:var(--bad)}.mono,code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
table{border-collapse:collapse;width:100%}
th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top;white-space:nowrap}
th{font-weight:600;color:var(--muted);font-size:12px;position:sticky;top:0;background:var(--bg)}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
tr.total td{font-weight:600;border-top:2px solid var(--line)}
.tree td.name{white-space:nowrap}.tree .indent{display:inline-block}
.tag{display:inline-block;padding:0 6px;border-radius:8px;font-size:11px;background:var(--soft);border:1px solid var(--line);color:var(--muted)}
.tag.held{color:var(--read);border-color:var(--read)}.tag.miss{color:var(--write);border-color:var(--write)}
.tag.err{color:var(--bad);border-color:var(--bad)}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin:8px 0 16px}
.card{border:1px solid var(--line);border-radius:6px;padding:8px 12px;min-width:130px}
.card b{display:block;font-size:18px}.card span{color:var(--muted);font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px;vertical-align:middle}
.k-read{fill:var(--read);background:var(--read)}.k-write{fill:var(--write);background:var(--write)}
.k-input{fill:var(--input);background:var(--input)}.k-output{fill:var(--output);background:var(--output)}
.k-cost{stroke:var(--cost);fill:none;stroke-width:1.5}.legend i.k-cost{background:var(--cost)}
svg.chart{width:100%;height:auto;border:1px solid var(--line);border-radius:6px;background:var(--soft)}
svg.chart text{font-size:10px;fill:var(--muted)}
.why li{margin:2px 0}
.msg{border:1px solid var(--line);border-radius:6px;margin:8px 0;padding:6px 10px}
.msg>.role{font-size:11px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
.msg.user{border-left:3px solid var(--accent)}.msg.assistant{border-left:3px solid var(--read)}
.msg.system{border-left:3px solid var(--muted)}.msg.answer{border-left:3px solid var(--output)}
.block{margin:4px 0}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;background:var(--soft);padding:6px 8px;border-radius:4px;max-height:none}
.call{border:1px dashed var(--line);border-radius:4px;padding:4px 8px;margin:4px 0}
details>summary{cursor:pointer;color:var(--muted)}
.diff .same{color:var(--muted)}.diff .add{background:rgba(46,157,91,.15)}.diff .del{background:rgba(194,72,61,.15)}
.diff.changes-only .same{display:none}
.toolbar{margin:6px 0}.toolbar button,.toolbar label{font-size:12px;margin-right:8px}
form.fork fieldset{border:1px solid var(--line);border-radius:6px;margin:8px 0}
form.fork textarea{width:100%;min-height:70px;font:inherit}
.cohort{display:grid;grid-template-columns:repeat(auto-fit,minmax(280px,1fr));gap:12px}
.cohort .member{border:1px solid var(--line);border-radius:6px;padding:8px 12px}
.member .answer pre{font-family:inherit;font-size:14px;background:none;padding:0}
.notice{border:1px solid var(--write);border-radius:6px;padding:8px 12px;margin:8px 0}
.live-dot{display:none;width:8px;height:8px;border-radius:4px;background:var(--read);margin-left:6px}
body.live .live-dot{display:inline-block}
.page{display:none}.page:target{display:block}body:not(:has(.page:target)) .page:first-of-type{display:block}
.export-note{font-size:12px;color:var(--muted)}
`

export const CLIENT_JS = `(function(){
'use strict';
var body=document.body;
function each(sel,fn){Array.prototype.forEach.call(document.querySelectorAll(sel),fn)}
// Folding: buttons that open or close every folded block of a transcript.
each('[data-fold]',function(b){b.hidden=false;b.addEventListener('click',function(){
var open=b.getAttribute('data-fold')==='open';
each(b.getAttribute('data-target')+' details',function(d){d.open=open})})});
// Diff toggles: show only what changed, or everything.
each('[data-diff-toggle]',function(c){var bar=c.closest('.toolbar');if(bar)bar.hidden=false;c.addEventListener('change',function(){
each(c.getAttribute('data-diff-toggle'),function(d){d.classList.toggle('changes-only',c.checked)})});
each(c.getAttribute('data-diff-toggle'),function(d){d.classList.toggle('changes-only',c.checked)})});
// Live: the server sends regions to replace and rows to replace or append, rendered as the page was.
var url=body.getAttribute('data-live');
if(url&&window.EventSource){
var es=new EventSource(url);
es.addEventListener('open',function(){body.classList.add('live')});
es.addEventListener('error',function(){body.classList.remove('live')});
es.addEventListener('regions',function(ev){
var m=JSON.parse(ev.data);var k,el;
for(k in m.replace||{}){el=document.getElementById(k);if(el)el.innerHTML=m.replace[k]}
for(k in m.upsert||{}){el=document.getElementById(k);if(!el)continue;
var t=document.createElement('template');t.innerHTML=m.upsert[k];
Array.prototype.slice.call(t.content.children).forEach(function(row){
var old=row.id&&document.getElementById(row.id);if(old)old.replaceWith(row);else el.appendChild(row)})}
body.setAttribute('data-live-after',String(m.after||''));
});}
})();
`

const hash = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 12)

/** The assets by the names pages link them under (`/ui/assets/<name>`). */
export const ASSETS: ReadonlyMap<string, { type: string; body: Buffer }> = new Map([
  [`view-${hash(CSS)}.css`, { type: 'text/css; charset=utf-8', body: Buffer.from(CSS) }],
  [`view-${hash(CLIENT_JS)}.js`, { type: 'text/javascript; charset=utf-8', body: Buffer.from(CLIENT_JS) }],
])

export const CSS_NAME = [...ASSETS.keys()][0] as string
export const JS_NAME = [...ASSETS.keys()][1] as string
