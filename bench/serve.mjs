// serve.mjs — static file server for the benchmark site, on 127.0.0.1 only.
//   node bench/serve.mjs ROOT     prints the port on its first stdout line,
//                                 then serves until killed (run.sh kills it by pid).
// Symlinks inside ROOT are followed (the site links to node_modules and to the
// extracted Debian manuals); ".." in a request path is refused.
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
    let p;
    try {
        p = decodeURIComponent(new URL(req.url, 'http://x').pathname);
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
        res.writeHead(200, {
            'content-type': types[path.extname(file).toLowerCase()] || 'application/octet-stream',
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
