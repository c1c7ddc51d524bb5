import { notFoundError } from '../openapi/errors.ts';
import { OpenApiHono } from '../openapi/routes.ts';
import { notFound } from '../shared/errors.ts';
import { faultRuleParams, faultRuleRequest, type FaultRules } from './fault-rules.ts';
import { journalFind, journalQuery } from './filter.ts';
import type { RequestJournal } from './journal.ts';
import { objstoreJournal, objstoreJournalSchema } from './objstore-journal.ts';
import { faultRuleResponseSchema, faultRulesResponseSchema, requestCountResponseSchema, requestsResponseSchema } from './schemas.ts';

export interface JournalRouteDeps {
  journal: RequestJournal;
  faultRules: FaultRules;
}

const requestsResponse = { status: 200, description: 'The matching requests, oldest first', schema: requestsResponseSchema };
const emptied = { status: 204, description: 'Emptied' };

/** /_localplane/requests (the request journal, /objstore/journal a view of it) and /_localplane/fault-rules. */
export function journalRoutes({ journal, faultRules }: JournalRouteDeps) {
  const app = new OpenApiHono('admin');

  app.openapi(
    { method: 'get', path: '/requests', summary: 'The request journal of the API and the objstore, filtered', query: journalQuery, response: requestsResponse },
    (c, { query }) => c.json({ requests: journal.list(query) }),
  );
  app.openapi(
    {
      method: 'get',
      path: '/requests/count',
      summary: 'How many journaled requests match the filter',
      query: journalQuery,
      response: { status: 200, description: 'The count', schema: requestCountResponseSchema },
    },
    (c, { query }) => c.json({ count: journal.count(query) }),
  );
  app.openapi(
    { method: 'post', path: '/requests/find', summary: 'The journaled requests matching a filter sent as JSON (WireMock\'s find)', body: journalFind, response: requestsResponse },
    (c, { body }) => c.json({ requests: journal.list(body) }),
  );
  app.openapi({ method: 'delete', path: '/requests', summary: 'Empty the request journal', response: emptied }, (c) => {
    journal.clear();
    return c.body(null, 204);
  });
  app.openapi(
    {
      method: 'get',
      path: '/objstore/journal',
      summary: "The objstore's requests, oldest first: an alias of GET /requests?source=objstore in the older shape",
      response: { status: 200, description: 'The journal', schema: objstoreJournalSchema },
    },
    (c) => c.json(objstoreJournal(journal)),
  );

  app.openapi(
    { method: 'get', path: '/fault-rules', summary: 'The fault rules, with how often each fired', response: { status: 200, description: 'The rules', schema: faultRulesResponseSchema } },
    (c) => c.json({ rules: faultRules.list() }),
  );
  app.openapi(
    {
      method: 'post',
      path: '/fault-rules',
      summary: 'Add a fault rule: requests it matches fail, slow down, lose their connection or get an empty reply',
      body: faultRuleRequest,
      response: { status: 201, description: 'The rule', schema: faultRuleResponseSchema },
    },
    (c, { body }) => c.json(faultRules.add(body), 201),
  );
  app.openapi({ method: 'delete', path: '/fault-rules', summary: 'Remove every fault rule', response: emptied }, (c) => {
    faultRules.clear();
    return c.body(null, 204);
  });
  app.openapi(
    {
      method: 'delete',
      path: '/fault-rules/:rule_id',
      summary: 'Remove one fault rule',
      params: faultRuleParams,
      response: { status: 204, description: 'Removed' },
      errors: [notFoundError('Fault rule', 'Fault rule fault-rule-7 not found')],
    },
    (c, { params }) => {
      if (!faultRules.remove(params.rule_id)) throw notFound(`Fault rule ${params.rule_id} not found`);
      return c.body(null, 204);
    },
  );

  return app;
}
