import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  carriedInQuery,
  DEFAULT_PROPAGATE_HEADERS,
  isValidTraceparent,
  MAX_PROPAGATED_VALUE_CHARS,
  propagatedHeaders,
  requestQuery,
  withoutInvalidTraceContext,
} from '../../src/observability/propagated-headers.ts';

const VALID = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

test('traceparent syntax follows W3C Trace Context', () => {
  assert.equal(isValidTraceparent(VALID), true);
  assert.equal(
    isValidTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x'),
    true,
  );
  for (const wrong of [
    '',
    'garbage',
    VALID.toUpperCase(),
    `${VALID}-extra`,
    'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
    '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
  ]) {
    assert.equal(isValidTraceparent(wrong), false, wrong);
  }
});

test('only allow-listed headers travel, under lower-case names', () => {
  assert.deepEqual(
    propagatedHeaders(
      { TraceParent: VALID, tracestate: 'a=b', 'correlation-id': 'c-1', cookie: 'x', empty: '' },
      DEFAULT_PROPAGATE_HEADERS,
    ),
    { traceparent: VALID, tracestate: 'a=b', 'correlation-id': 'c-1' },
  );
  assert.deepEqual(propagatedHeaders({ traceparent: VALID }, []), {});
});

test('an invalid traceparent travels not, nor its tracestate; over-long values stay behind', () => {
  assert.deepEqual(
    propagatedHeaders(
      { traceparent: 'nope', tracestate: 'a=b', 'correlation-id': 'c-1' },
      DEFAULT_PROPAGATE_HEADERS,
    ),
    { 'correlation-id': 'c-1' },
  );
  assert.deepEqual(
    propagatedHeaders(
      { 'correlation-id': 'x'.repeat(MAX_PROPAGATED_VALUE_CHARS + 1) },
      DEFAULT_PROPAGATE_HEADERS,
    ),
    {},
  );
});

test('a callback URL query brings the headers back, checked the same way', () => {
  assert.deepEqual(
    carriedInQuery(
      requestQuery(`/callbacks/t?traceparent=${VALID}&correlation-id=c%201&other=1`),
      DEFAULT_PROPAGATE_HEADERS,
    ),
    { traceparent: VALID, 'correlation-id': 'c 1' },
  );
  assert.deepEqual(carriedInQuery(requestQuery('/callbacks/t'), DEFAULT_PROPAGATE_HEADERS), {});
  assert.deepEqual(carriedInQuery(requestQuery(`/callbacks/t?traceparent=${VALID}`), []), {});
});

test('dead letters keep every header but invalid trace context', () => {
  const headers = { traceparent: 'bad', tracestate: 'a=b', 'ferry-transport': 'async', x: '1' };
  assert.deepEqual(withoutInvalidTraceContext(headers), { 'ferry-transport': 'async', x: '1' });
  const fine = { traceparent: VALID, tracestate: 'a=b', x: '1' };
  assert.equal(withoutInvalidTraceContext(fine), fine);
});
