import { z } from 'zod';
import { defineBuiltinTool } from './tool-definition';

export const CalculatorInputSchema = z.strictObject({
  expression: z
    .string({ error: 'expression must be a string' })
    .min(1, { error: 'expression must not be empty' })
    .max(1_000, { error: 'expression must be at most 1000 characters' })
    .describe('An arithmetic expression, e.g. "(2 + 3) * 4 ^ 2 / sqrt(16)".'),
});
export type CalculatorInput = z.infer<typeof CalculatorInputSchema>;

export const calculatorTool = defineBuiltinTool({
  name: 'calculator',
  description:
    'Evaluates an arithmetic expression exactly as written and returns the number. ' +
    'Supports + - * / % (remainder), ^ (power, right-associative), unary minus, parentheses, ' +
    'decimal numbers with optional exponent (1.5e3), the constants pi and e, and the functions ' +
    'sqrt, abs, floor, ceil, round, ln, log10. Use it instead of doing arithmetic in your head.',
  input: CalculatorInputSchema,
  classify: () => 'read_only',
  timeouts: { startToCloseMs: 5_000 },
});
