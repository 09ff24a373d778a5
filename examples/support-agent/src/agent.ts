import { defineAgent } from 'durable-agent-worker';
import { lookupOrder, refund } from './tools.js';

export const support = defineAgent({
  name: 'support',
  description: 'answers customers about their orders, and refunds them',
  model: 'anthropic:claude-sonnet-4-5',
  system: 'You are the shop\'s support. Look the order up before you answer; refund an order only when the customer asks for it.',
  tools: [lookupOrder, refund],
  settings: { maxSteps: 8 },
});
