import { ApplicationFailure } from '@temporalio/workflow';
import type { SessionConfig } from '../contracts/api';
import type { FailureType } from '../contracts/failure-types';
import type { AssistantMessage } from '../contracts/messages';
import { outputValidator, type OutputVerdict } from '../contracts/output-validation';
import { OUTPUT_ERRORS, type OutputSpec } from '../contracts/structured-output';
import type { QueuedMessage } from './session-state';

const OUTPUT_INVALID = 'output_invalid' satisfies FailureType;
const REFUSED = 'refused' satisfies FailureType;

/** What a turn must answer in: the message's own schema, else the session's; undefined for free text. */
export function outputSpecOf(message: QueuedMessage, config: SessionConfig): OutputSpec | undefined {
  const schema = message.outputSchema ?? config.outputSchema;
  return schema ? { schema } : undefined;
}

/**
 * A turn's output schema at work (structured output, docs/structured-output.md): it judges
 * each answer the model gives without asking for tools. A valid one is the turn's value;
 * an invalid one is sent back with its errors while repairs are left (`outputRetries`), and
 * fails the turn `output_invalid` with its errors after that. A refusal is never repaired:
 * the turn fails `refused`.
 */
export class TurnOutput {
  readonly #validate: (text: string) => OutputVerdict;
  readonly #retries: number;
  #rejected = 0;

  constructor(spec: OutputSpec, retries: number) {
    // Built once per turn: every answer of its steps is checked by the same validator.
    this.#validate = outputValidator(spec);
    this.#retries = retries;
  }

  /**
   * The answer's value when it is valid; its errors when the model is to be asked again.
   * Throws when the turn must fail: also on its last step (`lastStep`), where no repair
   * request could be sent, so the turn reports why it has no value.
   */
  judge(answer: AssistantMessage, lastStep: boolean): OutputVerdict {
    if (answer.stopReason === 'refusal') {
      const message = `the model refused to give an answer in the output schema's shape: ${JSON.stringify(clip(answer.text))}`;
      throw ApplicationFailure.create({ type: REFUSED, message, nonRetryable: true });
    }
    const verdict = this.#validate(answer.text);
    if (verdict.ok) return verdict;
    if (this.#rejected >= this.#retries || lastStep) {
      const asked = this.#rejected === 1 ? '1 repair request' : `${this.#rejected} repair requests`;
      const why = this.#rejected >= this.#retries ? `after ${asked}` : `at the turn's last step (maxSteps), after ${asked}`;
      const message = `the answer did not match the output schema ${why}: ${verdict.errors.join('; ')}`;
      throw ApplicationFailure.create({ type: OUTPUT_INVALID, message, nonRetryable: true });
    }
    this.#rejected++;
    return verdict;
  }
}

function clip(text: string): string {
  return text.length <= OUTPUT_ERRORS.chars ? text : `${text.slice(0, OUTPUT_ERRORS.chars - 1)}…`;
}
