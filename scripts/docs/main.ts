/** `npm run docs`: rewrites the generated parts of the docs from the code (see generated.ts). */
import { writeGeneratedParts } from './generated';

const changed = await writeGeneratedParts();
console.log(changed.length === 0 ? 'docs: every generated part is current' : `docs: rewrote ${changed.join(', ')}`);
