import { z } from 'zod';

/** The task queue that worker and client meet on: both read it from the same variable, with the same default. */
export const TaskQueueEnvSchema = z.object({
  AGENT_TASK_QUEUE: z.string().min(1).default('agent'),
});
