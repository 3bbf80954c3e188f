import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bucketQuantileMs, parseStageBuckets, stageFigures } from '../../bench/stage-metrics.ts';

const reading = (commitCounts: [number, number, number]) => `
# HELP ferry_pipeline_stage_seconds ...
ferry_pipeline_stage_seconds_bucket{le="0.01",stage="commit"} ${commitCounts[0]}
ferry_pipeline_stage_seconds_bucket{le="0.02",stage="commit"} ${commitCounts[1]}
ferry_pipeline_stage_seconds_bucket{le="+Inf",stage="commit"} ${commitCounts[2]}
ferry_pipeline_stage_seconds_bucket{le="0.01",stage="fetch"} 5
ferry_pipeline_stage_seconds_bucket{le="+Inf",stage="fetch"} 5
`;

test('quantiles interpolate within the bucket that holds the rank, as histogram_quantile does', () => {
  const buckets = new Map([
    [0.01, 50],
    [0.02, 100],
    [Number.POSITIVE_INFINITY, 100],
  ]);
  assert.equal(bucketQuantileMs(0.5, buckets), 10);
  assert.equal(Math.round(bucketQuantileMs(0.75, buckets)), 15);
  assert.ok(Number.isNaN(bucketQuantileMs(0.5, new Map([[Number.POSITIVE_INFINITY, 0]]))));
});

test('stage figures count only what was observed between the two readings', () => {
  const before = parseStageBuckets(reading([10, 10, 10]));
  const after = parseStageBuckets(reading([10, 30, 30]));
  const figures = stageFigures(before, after);
  const commit = figures.find((f) => f.stage === 'commit');
  assert.equal(commit?.batches, 20);
  // All 20 new observations fell between 10 and 20 ms.
  assert.ok(commit && commit.p50Ms > 10 && commit.p50Ms <= 20, String(commit?.p50Ms));
  assert.equal(figures.find((f) => f.stage === 'fetch')?.batches, 0);
});

test("a lane's stages are read apart from the other lane's", () => {
  const text = `
ferry_pipeline_stage_seconds_bucket{le="0.01",stage="commit"} 7
ferry_pipeline_stage_seconds_bucket{le="+Inf",stage="commit"} 9
ferry_pipeline_stage_seconds_bucket{le="0.01",stage="commit",lane="urgent"} 1
ferry_pipeline_stage_seconds_bucket{le="+Inf",stage="commit",lane="urgent"} 2
`;
  assert.equal(parseStageBuckets(text).get('commit')?.get(Number.POSITIVE_INFINITY), 9);
  assert.equal(parseStageBuckets(text, 'urgent').get('commit')?.get(Number.POSITIVE_INFINITY), 2);
});

test("ferry's own end to end is read per lane, summed over operation types", () => {
  const text = `
ferry_end_to_end_seconds_bucket{le="0.1",type="sms"} 3
ferry_end_to_end_seconds_bucket{le="+Inf",type="sms"} 4
ferry_end_to_end_seconds_bucket{le="0.1",type="viber"} 1
ferry_end_to_end_seconds_bucket{le="+Inf",type="viber"} 1
ferry_end_to_end_seconds_bucket{le="0.1",type="sms",lane="urgent"} 5
ferry_end_to_end_seconds_bucket{le="+Inf",type="sms",lane="urgent"} 6
`;
  assert.deepEqual(
    [...(parseStageBuckets(text).get('end_to_end') ?? [])],
    [
      [0.1, 4],
      [Number.POSITIVE_INFINITY, 5],
    ],
  );
  assert.equal(
    parseStageBuckets(text, 'urgent').get('end_to_end')?.get(Number.POSITIVE_INFINITY),
    6,
  );
});
