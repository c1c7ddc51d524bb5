import { Hono } from 'hono';
import { notFound } from '../shared/errors.ts';
import { jsonBody, pathParams, queryParams } from '../shared/validation.ts';
import { faultRuleParams, faultRuleRequest, type FaultRules } from './fault-rules.ts';
import { journalFind, journalQuery } from './filter.ts';
import type { RequestJournal } from './journal.ts';

export interface JournalRouteDeps {
  journal: RequestJournal;
  faultRules: FaultRules;
}

/** /_localplane/requests (the request journal) and /_localplane/fault-rules. */
export function journalRoutes({ journal, faultRules }: JournalRouteDeps) {
  const app = new Hono();

  app.get('/requests', (c) => c.json({ requests: journal.list(queryParams(c, journalQuery)) }));
  app.get('/requests/count', (c) => c.json({ count: journal.count(queryParams(c, journalQuery)) }));
  app.post('/requests/find', async (c) => c.json({ requests: journal.list(await jsonBody(c, journalFind)) }));
  app.delete('/requests', (c) => {
    journal.clear();
    return c.body(null, 204);
  });

  app.get('/fault-rules', (c) => c.json({ rules: faultRules.list() }));
  app.post('/fault-rules', async (c) => c.json(faultRules.add(await jsonBody(c, faultRuleRequest)), 201));
  app.delete('/fault-rules', (c) => {
    faultRules.clear();
    return c.body(null, 204);
  });
  app.delete('/fault-rules/:rule_id', (c) => {
    const { rule_id } = pathParams(c, faultRuleParams);
    if (!faultRules.remove(rule_id)) throw notFound(`Fault rule ${rule_id} not found`);
    return c.body(null, 204);
  });

  return app;
}
