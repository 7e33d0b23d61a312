// A real webhook receiver for the journeys: it checks every request's Standard Webhooks
// signature (HMAC-SHA256 over id.timestamp.body, computed here with node's crypto,
// independently of Granary) and keeps what it got.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

/**
 * Standard Webhooks: v1,base64(HMAC-SHA256(base64-decoded secret, `${id}.${ts}.${body}`)).
 * @param {string} secret
 * @param {import('node:http').IncomingHttpHeaders} headers
 * @param {string} body
 */
export function verified(secret, headers, body) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`)
    .digest();
  return String(headers['webhook-signature'] || '').split(' ').some((signature) => {
    const [version, value] = signature.split(',');
    const given = Buffer.from(value || '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/**
 * A receiver listening on 127.0.0.1:`port`; set `secret` once the endpoint is made. A request
 * whose signature does not verify is answered 401 (and kept, marked invalid).
 * @param {number} port
 */
export async function startReceiver(port) {
  const hook = {
    secret: '',
    /** @type {{ id: string, valid: boolean, type: string, data: any }[]} */
    received: [],
    close: () => server.close(),
  };
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => { body += chunk; });
    request.on('end', () => {
      const valid = verified(hook.secret, request.headers, body);
      const doc = JSON.parse(body);
      hook.received.push({ id: String(request.headers['webhook-id']), valid, type: doc.type, data: doc.data });
      response.writeHead(valid ? 204 : 401).end();
    });
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(undefined)));
  return hook;
}
