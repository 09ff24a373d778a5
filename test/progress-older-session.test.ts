/**
 * `watch` follows a session that a worker of an older version still runs (Worker
 * Versioning keeps it pinned there): its `state` Query answers without the fields newer
 * workers added (settings, spend, budget), and progress is still shown, not a TypeError.
 */
import { describe, expect, it } from 'vitest';
import { describeProgress } from '../client/progress';
import { runningState } from './support/running-state';

const olderState = runningState({ turn: 2, step: 3, stepsTaken: 7, phase: 'tools' });

describe('progress of a session on an older worker version', () => {
  it('shows the step without its limit and no spend line', () => {
    expect(describeProgress({ state: olderState, activities: [] }, 0)).toEqual(['turn 2 · step 3 · tools']);
  });
});
