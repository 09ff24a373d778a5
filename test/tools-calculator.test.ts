import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { evaluateExpression, formatNumber, runCalculator } from '../activities/tools/calculator';

const value = (expression: string) => {
  const result = evaluateExpression(expression);
  if (!result.ok) throw new Error(`expected a value for ${expression}, got: ${result.message}`);
  return result.value;
};

describe('calculator: arithmetic', () => {
  it.each([
    ['2 + 3 * 4', 14],
    ['(2 + 3) * 4', 20],
    ['8 / 2 / 2', 2],
    ['10 - 4 - 3', 3],
    ['7 / 2', 3.5],
    ['10 % 4', 2],
    ['2 ^ 3 ^ 2', 512],
    ['-2 ^ 2', -4],
    ['2 ^ -1', 0.5],
    ['2 * -3', -6],
    ['--3', 3],
    ['+4', 4],
    ['1.5e3 + .5', 1500.5],
    ['sqrt(16) + abs(-3)', 7],
    ['floor(2.7) + ceil(2.1) + round(2.5)', 8],
    ['ln(e) + log10(1000)', 4],
    ['  ( ( 1 ) )  ', 1],
  ])('evaluates %s = %d', (expression, expected) => {
    expect(value(expression)).toBeCloseTo(expected, 12);
  });

  it('knows pi', () => {
    expect(value('2 * pi')).toBeCloseTo(2 * Math.PI, 12);
  });

  it('hides binary floating-point noise but prints large integers in full', () => {
    expect(runCalculator({ expression: '0.1 + 0.2' })).toEqual({ code: 'ok', content: '0.3' });
    expect(runCalculator({ expression: '2 ^ 53' })).toEqual({ code: 'ok', content: '9007199254740992' });
    expect(formatNumber(-0)).toBe('0');
  });
});

describe('calculator: errors are results the model can act on', () => {
  it('reports division by zero with its position and a caret', () => {
    const outcome = runCalculator({ expression: '1 + 4 / (2 - 2)' });
    expect(outcome.code).toBe('error');
    expect(outcome.content).toBe('Cannot evaluate: division by zero at position 7.\n1 + 4 / (2 - 2)\n      ^');
  });

  it('reports remainder by zero', () => {
    expect(runCalculator({ expression: '5 % 0' }).content).toContain('remainder by zero at position 3');
  });

  it.each([
    ['2 +', 'unexpected end of expression; expected a number, a function or "(" at position 4'],
    ['(1 + 2', 'expected ")" to close the "(" at position 1, found end of expression'],
    ['1 2', 'unexpected number 2; expected an operator or the end at position 3'],
    ['2 $ 3', 'unexpected character "$" at position 3'],
    ['2 ** 3', 'unexpected "**"; use ^ for powers'],
    ['3 × 4', 'use * to multiply'],
    ['1,5', 'numbers use "." as the decimal point'],
    ['foo(2)', 'unknown name "foo"; known functions and constants: sqrt'],
    ['sqrt 4', 'expected "(" after sqrt'],
    ['sqrt(-1)', 'sqrt of a negative number at position 1'],
    ['ln(0)', 'ln of a number that is not positive'],
    ['(-8) ^ (1/3)', 'the power has no real value'],
    ['1e400', 'number 1e400 is too large'],
    ['10 ^ 400', 'the result is too large to represent'],
  ])('rejects %s', (expression, message) => {
    const outcome = runCalculator({ expression });
    expect(outcome.code).toBe('error');
    expect(outcome.content).toContain(message);
  });

  it.each(['valueOf(1)', '__proto__(1)', 'constructor(5) + 1', 'hasOwnProperty(2)', 'toString + 1', '__proto__'])(
    'answers %s, a name of the object prototype, as an unknown name',
    (expression) => {
      const outcome = runCalculator({ expression });
      expect(outcome.code).toBe('error');
      expect(outcome.content).toMatch(/^Cannot evaluate: unknown name "\w+"; known functions and constants: sqrt, abs, floor, ceil, round, ln, log10, pi, e at position 1\./);
    },
  );

  it('refuses nesting deep enough to overflow the stack', () => {
    const expression = `${'('.repeat(500)}1${')'.repeat(500)}`;
    expect(runCalculator({ expression }).content).toContain('nested deeper than 200 levels');
    expect(runCalculator({ expression: `${'-'.repeat(500)}1` }).content).toContain('nested deeper than 200 levels');
  });
});

describe('calculator: no eval', () => {
  afterEach(() => vi.restoreAllMocks());

  it.each(['process.exit(1)', 'constructor', '__proto__', 'this', 'globalThis', 'require("fs")', '1; 2', '"a"'])(
    'treats JavaScript %s as an error, not as code',
    (expression) => {
      const evalSpy = vi.spyOn(globalThis, 'eval');
      expect(runCalculator({ expression }).code).toBe('error');
      expect(evalSpy).not.toHaveBeenCalled();
    },
  );

  it('has no eval or Function constructor in its source', () => {
    const source = readFileSync(new URL('../activities/tools/calculator.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/\beval\s*\(|\bnew\s+Function\b|\bFunction\s*\(/);
  });
});
