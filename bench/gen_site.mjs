// gen_site.mjs — the generated benchmark pages, written into OUTDIR:
//   act.html    a button, a text box and a checkbox, for click/type latency
//   dense.html  an admin table of 100 accounts: 600+ controls, with row context
//   long.html   a 80,000+ character article with a table of contents
//   node bench/gen_site.mjs OUTDIR
import fs from 'node:fs';
import path from 'node:path';

const out = process.argv[2];
fs.mkdirSync(out, { recursive: true });

let seed = 12345;
function rnd(n) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
}
const words = ('the of and to in is that for it as was with be by on not he this are or his ' +
    'from at which but have an they you were her she there been one all we their has would ' +
    'when if so no will more can other what about into than them only some could these time ' +
    'browser protocol session target frame render layout paint network request response ' +
    'cache cookie storage worker script module style token budget snapshot element button ' +
    'link table row column header landmark region dialog alert focus pointer keyboard ' +
    'scroll offset viewport document navigation history origin policy sandbox process ' +
    'memory latency throughput median percentile sample measure benchmark driver agent').split(' ');
function sentence() {
    const n = 8 + rnd(14);
    const w = [];
    for (let i = 0; i < n; i++) w.push(words[rnd(words.length)]);
    w[0] = w[0][0].toUpperCase() + w[0].slice(1);
    return w.join(' ') + '.';
}
const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

fs.writeFileSync(path.join(out, 'act.html'), `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Actions</title></head>
<body>
<main>
<h1>Actions</h1>
<p><button id="inc" type="button">Increment</button> <span id="count">Count: 0</span></p>
<p><label for="name">Name</label> <input id="name" type="text"> <span id="hello"></span></p>
<p><label><input id="agree" type="checkbox"> Agree</label></p>
</main>
<script>
let n = 0;
document.getElementById('inc').addEventListener('click', () => {
  document.getElementById('count').textContent = 'Count: ' + (++n);
});
document.getElementById('name').addEventListener('input', (e) => {
  document.getElementById('hello').textContent = 'Hello, ' + e.target.value;
});
</script>
</body></html>
`);

const companies = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Tyrell',
    'Cyberdyne', 'Soylent', 'Wonka', 'Gringotts', 'Oscorp', 'Vandelay', 'Pied Piper', 'Dunder'];
let rows = '';
for (let i = 1; i <= 100; i++) {
    const id = String(i).padStart(3, '0');
    const co = `${companies[i % companies.length]} ${id}`;
    const more = i % 10 === 0
        ? ` <span role="button" tabindex="0" class="more">More</span>` : '';
    rows += `<tr>
<td><input type="checkbox" aria-label="Select"></td>
<td><a href="#account-${i}">${co}</a></td>
<td>${(rnd(900000) / 100).toFixed(2)}</td>
<td><input type="text" placeholder="Note"></td>
<td><select aria-label="Status"><option>Active</option><option>Suspended</option><option>Closed</option></select></td>
<td><button type="button">Edit</button> <button type="button">Delete</button>${more}</td>
</tr>
`;
}
let nav = '';
for (const s of ['Dashboard', 'Accounts', 'Invoices', 'Payments', 'Reports', 'Users', 'Roles',
    'Audit log', 'Settings', 'Help']) nav += `<li><a href="#${s.toLowerCase().replace(/ /g, '-')}">${s}</a></li>`;
let pages = '';
for (let i = 1; i <= 20; i++) pages += ` <a href="#page-${i}">${i}</a>`;
fs.writeFileSync(path.join(out, 'dense.html'), `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Accounts (dense)</title>
<style>table{border-collapse:collapse}td{border:1px solid #ccc;padding:2px 6px}</style></head>
<body>
<header><nav aria-label="Main"><ul>${nav}</ul></nav></header>
<main>
<h1>Accounts</h1>
<form role="search" onsubmit="return false">
<label>Search <input type="search" name="q"></label>
<label>Region <select name="region"><option>All</option><option>EMEA</option><option>APAC</option><option>Americas</option></select></label>
<label><input type="checkbox" name="active"> Active only</label>
<button type="submit">Search</button> <button type="reset">Clear</button>
</form>
<table>
<thead><tr><th>Select</th><th>Account</th><th>Balance</th><th>Note</th><th>Status</th><th>Actions</th></tr></thead>
<tbody>
${rows}</tbody>
</table>
<details><summary>Bulk actions</summary>
<button type="button">Export selected</button> <button type="button">Suspend selected</button>
<textarea aria-label="Bulk comment"></textarea>
</details>
<nav aria-label="Pagination">${pages}</nav>
</main>
<footer><a href="#privacy">Privacy</a> <a href="#terms">Terms</a></footer>
</body></html>
`);

let toc = '', body = '', total = 0;
for (let s = 1; s <= 40; s++) {
    toc += `<li><a href="#s${s}">Section ${s}</a></li>`;
    body += `<section id="s${s}"><h2>Section ${s}</h2>\n`;
    for (let p = 0; p < 5; p++) {
        let para = '';
        while (para.length < 380) para += sentence() + ' ';
        total += para.length;
        body += `<p>${esc(para.trim())}</p>\n`;
    }
    body += `<p>See also <a href="#s${s % 40 + 1}">section ${s % 40 + 1}</a>.</p></section>\n`;
}
body += '<p id="last">This is the last sentence of the long article.</p>\n';
fs.writeFileSync(path.join(out, 'long.html'), `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A long article</title></head>
<body>
<main><article>
<h1>A long article</h1>
<nav aria-label="Contents"><ol>${toc}</ol></nav>
${body}</article>
<p><a href="#">Back to top</a></p>
</main>
</body></html>
`);
process.stderr.write(`gen_site: act.html, dense.html (100 rows), long.html (${total} chars of paragraphs)\n`);
