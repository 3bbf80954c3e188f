/**
 * kafkajs as ferry loads it: every module of ferry imports kafkajs from here, so the
 * workarounds that must be in place before kafkajs's own modules load come first.
 * ECMAScript modules evaluate their imports in order, and kafkajs (CommonJS) runs when
 * its turn comes, after them.
 */
import './kafkajs-grouping.ts';
// After the grouping: it loads kafkajs's sendMessages.js, which binds the grouping then.
import './settled-send-retries.ts';
import { installBoundedFetch } from './bounded-fetch.ts';
import { installCoordinatorLossRejoin } from './coordinator-loss.ts';
import { installCoordinatorNotFoundRetry } from './coordinator-not-found.ts';
import { installIdleRequestQueue } from './idle-request-queue.ts';

// Before any client exists: every Fetch answer of the process is decoded bounded, every
// consumer rejoins when its group coordinator cannot be reached and keeps looking when no
// broker names one, and no idle connection spins a timer.
installBoundedFetch();
installCoordinatorLossRejoin();
installCoordinatorNotFoundRetry();
installIdleRequestQueue();

export * from 'kafkajs';
export { default } from 'kafkajs';
