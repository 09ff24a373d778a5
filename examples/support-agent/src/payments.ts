import { startPaymentsApi } from './payments-api.js';

const payments = await startPaymentsApi({ ledger: process.env.REFUNDS_LEDGER ?? 'refunds.jsonl', port: 4010 });
console.log(`payments API: ${payments.url}, ledger ${process.env.REFUNDS_LEDGER ?? 'refunds.jsonl'}`);
