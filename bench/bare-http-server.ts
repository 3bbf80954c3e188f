/**
 * The receipts benchmark's reference server: node:http reading each body and answering 200
 * `{"success":true}`, nothing else. The load generator's rate against it is its ceiling on
 * this machine. Listens on 127.0.0.1:BARE_HTTP_PORT.
 */
import { createServer } from 'node:http';

const answer = Buffer.from('{"success":true}');
const server = createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
    res.end(answer);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(Number(process.env.BARE_HTTP_PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
