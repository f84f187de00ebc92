// Checks answers of the real server against docs/openapi.json: the status
// must be one the operation lists, the content type its, and the body valid
// against its schema (Ajv, JSON Schema 2020-12, which OpenAPI 3.1 uses).
// Records which statuses each operation was seen to answer, for coverage.
import Ajv2020 from 'ajv/dist/2020.js';
import { readFileSync } from 'node:fs';

export const documentPath = new URL('../../docs/openapi.json', import.meta.url);

export class Contract {
  constructor(doc = JSON.parse(readFileSync(documentPath, 'utf8'))) {
    this.doc = doc;
    // strict: false: the document carries OpenAPI's own keywords beside the
    // schemas (description, x-role...), which are not JSON Schema keywords.
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    this.ajv.addSchema(doc, 'openapi.json');
    this.compiled = new Map();
    this.seen = new Map(); // "GET /api/tickets/{ticket}" -> Set of statuses
    this.failures = [];
  }

  // The document's template for a concrete path: same segment count, every
  // literal segment equal; the most literal one wins (/api/lobbies/find over
  // /api/lobbies/{lobby}).
  template(method, path) {
    const segments = path.split('/');
    let best = null;
    let bestLiterals = -1;
    for (const [template, item] of Object.entries(this.doc.paths)) {
      if (!item[method]) continue;
      const t = template.split('/');
      if (t.length !== segments.length) continue;
      let literals = 0;
      let fits = true;
      for (let i = 0; i < t.length && fits; ++i) {
        if (/^\{.+\}$/.test(t[i])) fits = segments[i].length > 0;
        else if (t[i] === segments[i]) ++literals;
        else fits = false;
      }
      if (fits && literals > bestLiterals) {
        best = template;
        bestLiterals = literals;
      }
    }
    return best;
  }

  response(op, status) {
    let r = op.responses[String(status)] ?? op.responses[`${String(status)[0]}XX`] ?? op.responses.default;
    if (r && r.$ref) r = r.$ref.split('/').slice(1).reduce((o, k) => o[k], this.doc);
    return r;
  }

  validator(key, schema) {
    if (!this.compiled.has(key)) {
      // A schema taken out of the document: its refs point into the whole
      // document, registered as "openapi.json".
      const rooted = JSON.parse(JSON.stringify(schema).replaceAll('"#/', '"openapi.json#/'));
      this.compiled.set(key, this.ajv.compile(rooted));
    }
    return this.compiled.get(key);
  }

  // Validates a message against a schema of the document (the WebSocket's).
  validMessage(key, schema, message, what) {
    const validate = this.validator(key, schema);
    if (!validate(message))
      this.fail(`${what}: ${JSON.stringify(message).slice(0, 300)} does not fit ${key}: ` +
                this.ajv.errorsText(validate.errors));
  }

  fail(text) {
    this.failures.push(text);
  }

  // Checks one answer; returns its parsed JSON body (or text).
  check(method, path, status, contentType, text) {
    const m = method.toLowerCase();
    const bare = path.split('?')[0];
    const what = `${method} ${path} -> ${status}`;
    // A 405 is the answer of a path to a method it does not take: it counts
    // for the path's operation that lists it.
    const template =
      this.template(m, bare) ??
      (status === 405 ? Object.keys(this.doc.paths[bare] ?? {}).map((other) => this.template(other, bare)).find(Boolean) : null);
    const opMethod = template && this.doc.paths[template][m] ? m : Object.keys(this.doc.paths[template] ?? {})[0];
    if (!template) {
      this.fail(`${what}: no operation of the document serves ${method} ${bare}`);
      return null;
    }
    const key = `${opMethod.toUpperCase()} ${template}`;
    if (!this.seen.has(key)) this.seen.set(key, new Set());
    this.seen.get(key).add(status);
    const op = this.doc.paths[template][opMethod];
    const r = this.response(op, status);
    if (!r) {
      this.fail(`${what}: the operation ${op.operationId} lists no ${status} (it lists ${Object.keys(op.responses).join(', ')})`);
      return null;
    }
    if (!r.content) return text;
    const type = (contentType ?? '').split(';')[0].trim();
    const media = r.content[type];
    if (!media) {
      this.fail(`${what}: content type '${contentType}' is not one of ${Object.keys(r.content).join(', ')}`);
      return null;
    }
    let body = text;
    if (type === 'application/json') {
      try {
        body = JSON.parse(text);
      } catch {
        this.fail(`${what}: the body is not JSON: ${text.slice(0, 200)}`);
        return null;
      }
    }
    const validate = this.validator(`${key} ${status} ${type}`, media.schema);
    if (!validate(body))
      this.fail(`${what}: the body does not fit its schema: ${this.ajv.errorsText(validate.errors)}\n  ${text.slice(0, 400)}`);
    return body;
  }

  // A request body the server accepted must fit the operation's request
  // schema: the document must not refuse what the server takes.
  checkAccepted(method, path, body) {
    const m = method.toLowerCase();
    const template = this.template(m, path.split('?')[0]);
    const schema = template && this.doc.paths[template][m].requestBody?.content['application/json']?.schema;
    if (!schema) return;
    const validate = this.validator(`${method} ${template} request`, schema);
    if (!validate(body))
      this.fail(`${method} ${path}: the server accepted a body its schema refuses: ${this.ajv.errorsText(validate.errors)}\n  ${JSON.stringify(body).slice(0, 300)}`);
  }

  // Every operation must have been seen answering a success and an error.
  uncovered() {
    const missing = [];
    for (const [template, item] of Object.entries(this.doc.paths))
      for (const [m, op] of Object.entries(item)) {
        const key = `${m.toUpperCase()} ${template}`;
        const statuses = [...(this.seen.get(key) ?? [])];
        if (!statuses.some((s) => s < 300 && s !== 307)) missing.push(`${key} (${op.operationId}): no success seen`);
        if (!statuses.some((s) => s >= 400)) missing.push(`${key} (${op.operationId}): no error seen`);
      }
    return missing;
  }
}
