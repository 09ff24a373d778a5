import type { CalculatorInput } from '../../contracts/tools/calculator';
import type { ToolOutcome } from '../../contracts/tools/tool-outcome';

/**
 * A recursive-descent evaluator for the calculator tool. It never reaches `eval` or
 * `Function`: the model's text is data, and only this grammar gives it meaning.
 *
 *   expression := term (("+" | "-") term)*
 *   term       := unary (("*" | "/" | "%") unary)*
 *   unary      := ("-" | "+") unary | power
 *   power      := primary ("^" unary)?          right-associative; -2^2 = -(2^2), 2^-1 = 0.5
 *   primary    := number | constant | function "(" expression ")" | "(" expression ")"
 */

export type Evaluation = { ok: true; value: number } | { ok: false; message: string; position: number };

/**
 * Maps, not object literals: a name the model writes is looked up among these entries only,
 * never on the object prototype (`valueOf`, `constructor`, `__proto__`).
 */
const FUNCTIONS: ReadonlyMap<string, (x: number) => number | string> = new Map<string, (x: number) => number | string>([
  ['sqrt', (x) => (x < 0 ? 'sqrt of a negative number' : Math.sqrt(x))],
  ['abs', Math.abs],
  ['floor', Math.floor],
  ['ceil', Math.ceil],
  ['round', Math.round],
  ['ln', (x) => (x <= 0 ? 'ln of a number that is not positive' : Math.log(x))],
  ['log10', (x) => (x <= 0 ? 'log10 of a number that is not positive' : Math.log10(x))],
]);

const CONSTANTS: ReadonlyMap<string, number> = new Map([
  ['pi', Math.PI],
  ['e', Math.E],
]);

/** Deep enough for any real formula, shallow enough that "((((…" cannot overflow the stack. */
const MAX_DEPTH = 200;

class EvaluationError extends Error {
  constructor(
    message: string,
    /** 0-based offset into the expression. */
    readonly position: number,
  ) {
    super(message);
  }
}

type Token =
  | { kind: 'number'; value: number; position: number; text: string }
  | { kind: 'name'; name: string; position: number }
  | { kind: 'op'; op: string; position: number }
  | { kind: 'end'; position: number };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const number = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(source.slice(i));
    if (number) {
      tokens.push({ kind: 'number', value: Number(number[0]), position: i, text: number[0] });
      i += number[0].length;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(source.slice(i));
    if (name) {
      tokens.push({ kind: 'name', name: name[0], position: i });
      i += name[0].length;
      continue;
    }
    // Name the common slips explicitly: the model often writes them.
    if (source.startsWith('**', i)) throw new EvaluationError('unexpected "**"; use ^ for powers', i);
    if ('+-*/%^()'.includes(ch)) {
      tokens.push({ kind: 'op', op: ch, position: i });
      i++;
      continue;
    }
    if (ch === '×') throw new EvaluationError('unexpected "×"; use * to multiply', i);
    if (ch === '÷') throw new EvaluationError('unexpected "÷"; use / to divide', i);
    if (ch === ',') throw new EvaluationError('unexpected ","; functions take one argument and numbers use "." as the decimal point', i);
    throw new EvaluationError(`unexpected character "${ch}"`, i);
  }
  tokens.push({ kind: 'end', position: source.length });
  return tokens;
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): number {
    const value = this.expression();
    const next = this.peek();
    if (next.kind !== 'end') throw new EvaluationError(`unexpected ${describe(next)}; expected an operator or the end`, next.position);
    return value;
  }

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private next(): Token {
    return this.tokens[this.index++]!;
  }

  private isOp(op: string): boolean {
    const token = this.peek();
    return token.kind === 'op' && token.op === op;
  }

  private expression(): number {
    let value = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = this.next() as { op: string };
      const right = this.term();
      value = op.op === '+' ? value + right : value - right;
    }
    return value;
  }

  private term(): number {
    let value = this.unary();
    while (this.isOp('*') || this.isOp('/') || this.isOp('%')) {
      const op = this.next() as { op: string; position: number };
      const right = this.unary();
      if (op.op === '*') value *= right;
      else if (right === 0) throw new EvaluationError(op.op === '/' ? 'division by zero' : 'remainder by zero', op.position);
      else value = op.op === '/' ? value / right : value % right;
    }
    return value;
  }

  private unary(): number {
    if (this.isOp('-') || this.isOp('+')) {
      const op = this.next() as { op: string; position: number };
      const operand = this.nested(op.position, () => this.unary());
      return op.op === '-' ? -operand : operand;
    }
    return this.power();
  }

  private power(): number {
    const base = this.primary();
    if (!this.isOp('^')) return base;
    const op = this.next();
    const exponent = this.nested(op.position, () => this.unary());
    const value = base ** exponent;
    if (Number.isNaN(value)) throw new EvaluationError('the power has no real value (negative base with a fractional exponent)', op.position);
    return value;
  }

  private primary(): number {
    const token = this.next();
    if (token.kind === 'number') {
      if (!Number.isFinite(token.value)) throw new EvaluationError(`number ${token.text} is too large`, token.position);
      return token.value;
    }
    if (token.kind === 'op' && token.op === '(') {
      const value = this.nested(token.position, () => this.expression());
      this.expectClose(token.position);
      return value;
    }
    if (token.kind === 'name') {
      const fn = FUNCTIONS.get(token.name);
      if (fn) {
        const open = this.next();
        if (open.kind !== 'op' || open.op !== '(') throw new EvaluationError(`expected "(" after ${token.name}`, open.position);
        const argument = this.nested(open.position, () => this.expression());
        this.expectClose(open.position);
        const result = fn(argument);
        if (typeof result === 'string') throw new EvaluationError(result, token.position);
        return result;
      }
      const constant = CONSTANTS.get(token.name);
      if (constant !== undefined) return constant;
      const known = [...FUNCTIONS.keys(), ...CONSTANTS.keys()].join(', ');
      throw new EvaluationError(`unknown name "${token.name}"; known functions and constants: ${known}`, token.position);
    }
    throw new EvaluationError(`unexpected ${describe(token)}; expected a number, a function or "("`, token.position);
  }

  private expectClose(openPosition: number): void {
    const close = this.next();
    if (close.kind !== 'op' || close.op !== ')') {
      throw new EvaluationError(`expected ")" to close the "(" at position ${openPosition + 1}, found ${describe(close)}`, close.position);
    }
  }

  private nested<T>(position: number, parse: () => T): T {
    if (++this.depth > MAX_DEPTH) throw new EvaluationError(`expression nested deeper than ${MAX_DEPTH} levels`, position);
    try {
      return parse();
    } finally {
      this.depth--;
    }
  }
}

function describe(token: Token): string {
  switch (token.kind) {
    case 'number':
      return `number ${token.text}`;
    case 'name':
      return `"${token.name}"`;
    case 'op':
      return `"${token.op}"`;
    case 'end':
      return 'end of expression';
  }
}

export function evaluateExpression(expression: string): Evaluation {
  try {
    const value = new Parser(tokenize(expression)).parse();
    if (!Number.isFinite(value)) return { ok: false, message: 'the result is too large to represent', position: 0 };
    return { ok: true, value };
  } catch (error) {
    if (error instanceof EvaluationError) return { ok: false, message: error.message, position: error.position };
    throw error;
  }
}

/**
 * Binary floating point makes 0.1 + 0.2 print as 0.30000000000000004; 15 significant
 * digits hide that noise. Integers print in full so large exact results are not rounded.
 */
export function formatNumber(value: number): string {
  if (Object.is(value, -0)) return '0';
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return String(value);
  return String(Number(value.toPrecision(15)));
}

export function runCalculator(input: CalculatorInput): ToolOutcome {
  const result = evaluateExpression(input.expression);
  if (result.ok) return { code: 'ok', content: formatNumber(result.value) };
  // A caret under the offending spot lets the model fix the exact character.
  const column = result.position + 1;
  const pointer = input.expression.includes('\n') ? '' : `\n${input.expression}\n${' '.repeat(result.position)}^`;
  return { code: 'error', content: `Cannot evaluate: ${result.message} at position ${column}.${pointer}` };
}
