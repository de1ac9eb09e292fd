// serve.mjs — static file server for the benchmark site, on 127.0.0.1 only.
//   node bench/serve.mjs ROOT     prints the port on its first stdout line,
//                                 then serves until killed (run.sh kills it by pid).
// Symlinks inside ROOT are followed (the site links to node_modules and to the
// extracted Debian manuals); ".." in a request path is refused.
// An HTML page asked for with `?mutate=MS` gets one script appended that
// changes the text of an invisible element every MS milliseconds: the page
// is otherwise unchanged, but no snapshot of it can be a cache hit once MS
// has passed (the "cold" column of compare.mjs).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(process.argv[2] || '.');
const types = {
    '.html': 'text/html; charset=utf-8', '.htm': 'text/html; charset=utf-8',
    '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
    '.jsx': 'text/jsx; charset=utf-8', '.css': 'text/css; charset=utf-8',
    '.json': 'application/json', '.yaml': 'text/yaml; charset=utf-8',
    '.yml': 'text/yaml; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png',
    '.gif': 'image/gif', '.jpg': 'image/jpeg', '.ico': 'image/x-icon',
    '.woff': 'font/woff', '.woff2': 'font/woff2', '.ttf': 'font/ttf', '.map': 'application/json',
    '.txt': 'text/plain; charset=utf-8',
};

const server = http.createServer((req, res) => {
    let p, mutate = 0;
    try {
        const u = new URL(req.url, 'http://x');
        p = decodeURIComponent(u.pathname);
        mutate = Math.max(0, Math.min(600000, Number(u.searchParams.get('mutate')) || 0));
    } catch {
        res.writeHead(400).end();
        return;
    }
    if (p.split('/').includes('..')) {
        res.writeHead(403).end();
        return;
    }
    let file = path.join(root, p);
    fs.stat(file, (err, st) => {
        if (!err && st.isDirectory()) {
            file = path.join(file, 'index.html');
            st = fs.existsSync(file) ? fs.statSync(file) : null;
        }
        if (err || !st || !st.isFile()) {
            res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
            return;
        }
        const type = types[path.extname(file).toLowerCase()] || 'application/octet-stream';
        if (mutate && type.startsWith('text/html')) {
            const body = Buffer.concat([fs.readFileSync(file), Buffer.from(
                `<script>(() => { const m = document.createElement('span'); m.hidden = true;` +
                ` document.documentElement.appendChild(m); let n = 0;` +
                ` setInterval(() => { m.textContent = 'tick ' + (++n); }, ${mutate}); })();</script>\n`)]);
            res.writeHead(200, { 'content-type': type, 'content-length': body.length, 'cache-control': 'no-store' });
            res.end(req.method === 'HEAD' ? undefined : body);
            return;
        }
        res.writeHead(200, {
            'content-type': type,
            'content-length': st.size,
            'cache-control': 'no-store',
        });
        if (req.method === 'HEAD') {
            res.end();
            return;
        }
        fs.createReadStream(file).pipe(res);
    });
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${server.address().port}\n`);
});
