// `restate.endpoint` and `restate.triggers` in the engine config: defaults, and a one-line
// error naming the field for what would leave the endpoint unreachable or unguarded.
import { expect, it } from 'vitest';
import { resolveConfig } from '../../compose/config.ts';
import { endpointBase } from '../../src/adapters/restate/deployments.ts';

const KEY = 'publickeyv1_2G8dCQhArfvGpzPw5Vx2ALciR6Cep5XZFkR2KhEk3VH1';
const external = { ingressUrl: 'http://10.0.0.5:8080', adminUrl: 'http://10.0.0.5:9070' };

it('defaults: loopback endpoint, local triggers', () => {
  const c = resolveConfig({ backend: 'restate', restate: { endpoint: {} } }, {});
  expect(c.restate?.endpoint).toEqual({ host: '127.0.0.1' });
  expect(c.restate?.triggers).toBe('local');
});

it('the advertised url gets a trailing slash; a port and host are kept', () => {
  const c = resolveConfig({ backend: 'restate', restate: { ...external, identityKeys: [KEY], endpoint: { host: '0.0.0.0', port: 9080, url: 'http://lb.internal:9080' } } }, {});
  expect(c.restate?.endpoint).toEqual({ host: '0.0.0.0', port: 9080, url: 'http://lb.internal:9080/' });
});

it('a wildcard bind with no url is refused, naming restate.endpoint.url', () => {
  expect(() => resolveConfig({ restate: { endpoint: { host: '0.0.0.0' } } }, {})).toThrow(/restate\.endpoint\.url.*required when host is 0\.0\.0\.0/);
});

it('an external Restate with an endpoint off loopback needs identityKeys', () => {
  expect(() => resolveConfig({ restate: { ...external, endpoint: { host: '10.0.0.7', port: 9080 } } }, {})).toThrow(/restate\.identityKeys.*not loopback/);
  expect(() => resolveConfig({ restate: { ...external, identityKeys: [KEY], endpoint: { host: '10.0.0.7', port: 9080 } } }, {})).not.toThrow();
  expect(() => resolveConfig({ restate: { ...external, identityKeys: [] } }, {})).toThrow(/identityKeys/);
});

it('bad values name their field', () => {
  expect(() => resolveConfig({ restate: { endpoint: { port: 70000 } } }, {})).toThrow(/restate\.endpoint\.port/);
  expect(() => resolveConfig({ restate: { endpoint: { url: 'ftp://x/' } } }, {})).toThrow(/restate\.endpoint\.url/);
  expect(() => resolveConfig({ restate: { triggers: 'cluster' } }, {})).toThrow(/restate\.triggers/);
});

it('IPv6 hosts are bracketed in the deployment URL', () => {
  expect(endpointBase('::1', 9080)).toBe('http://[::1]:9080/');
  expect(endpointBase('10.0.0.7', 9080)).toBe('http://10.0.0.7:9080/');
});
