/**
 * Deterministic synthetic trace runs for the `runs` table: realistic-looking trace trees
 * (root chain → retriever / llm / tool / nested chains), JSON payloads, tokens and costs,
 * spread over a UTC time range. Everything comes from one seeded PRNG, so the same options
 * always give byte-identical rows. `generateRuns` is a generator and keeps memory flat.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { uuidFrom } from '../shared/ids.ts';
import { createRandom, pick, seedFrom, type Random } from '../shared/prng.ts';
import { MICROS_PER_DAY, type Micros } from '../shared/time.ts';
import { RUN_COLUMNS, type RunRow } from './schema.ts';

export interface GenerateRunsOptions {
  tenantId: string;
  sessionId: string;
  /** Exact number of runs to produce. */
  count: number;
  /** First instant of the time range (UTC). */
  startMicros: Micros;
  /** Root start times are spread evenly-ish over [startMicros, startMicros + days*24h). */
  days: number;
  seed: number;
}

type RunType = 'chain' | 'llm' | 'tool' | 'retriever';
type Status = RunRow['status'];

// ---------------------------------------------------------------------------------------
// Vocabulary (precomputed once)
// ---------------------------------------------------------------------------------------

const NOUNS = [
  'invoice',
  'account',
  'subscription',
  'order',
  'refund',
  'password',
  'dashboard',
  'report',
  'pipeline',
  'dataset',
  'model',
  'prompt',
  'deployment',
  'cluster',
  'bucket',
  'token',
  'webhook',
  'integration',
  'workspace',
  'project',
  'query',
  'index',
  'schema',
  'table',
  'export',
  'policy',
  'permission',
  'team',
  'billing plan',
  'API key',
  'trace',
  'dataset split',
  'embedding',
  'vector store',
  'retry policy',
  'rate limit',
  'timeout',
  'cache',
  'region',
  'backup',
  'migration',
  'notification',
  'calendar',
  'shipment',
  'warehouse',
  'contract',
];
const VERBS = [
  'configure',
  'export',
  'delete',
  'rotate',
  'migrate',
  'share',
  'debug',
  'monitor',
  'update',
  'restore',
  'cancel',
  'upgrade',
  'connect',
  'filter',
  'schedule',
  'deploy',
  'evaluate',
  'compare',
  'archive',
  'retry',
  'invite',
  'reset',
  'sync',
  'tag',
];
const ADJECTIVES = [
  'new',
  'existing',
  'shared',
  'private',
  'default',
  'production',
  'staging',
  'legacy',
  'large',
  'failed',
  'pending',
  'monthly',
  'annual',
  'internal',
  'public',
  'custom',
  'encrypted',
  'regional',
  'primary',
  'secondary',
];
const FILLER = [
  'the',
  'a',
  'your',
  'this',
  'each',
  'every',
  'that',
  'our',
  'their',
  'any',
  'its',
  'one',
  'with',
  'from',
  'into',
  'for',
  'after',
  'before',
  'when',
  'while',
  'using',
  'without',
  'and',
  'or',
  'but',
  'then',
  'also',
  'only',
  'usually',
  'first',
  'next',
  'finally',
  'is',
  'are',
  'can',
  'should',
  'will',
  'may',
  'must',
  'needs',
  'requires',
  'supports',
];
const PRODUCTS = [
  'the console',
  'the CLI',
  'the Python SDK',
  'the REST API',
  'the mobile app',
  'the admin panel',
  'Terraform',
  'the web UI',
];
const QUESTION_STARTS = [
  'How do I',
  'What is the best way to',
  'Can you explain how to',
  'Is it possible to',
  "Why can't I",
  'What happens when I',
  'Where do I go to',
  'Is there a limit on how often I can',
];
const ANSWER_STARTS = [
  'To do this,',
  'Yes —',
  'You can',
  'In most cases,',
  'Sure.',
  'Based on the documentation,',
  'The short answer is that',
  'According to the retrieved context,',
];
const SYSTEM_PROMPTS = [
  'You are a helpful support assistant. Answer using only the provided context. If you do not know, say so.',
  'You are an expert assistant for a SaaS platform. Be concise and cite the documentation when possible.',
  'You are an agent that can call tools. Think step by step and use tools when the answer requires fresh data.',
  'Answer the user question based on the context below. Keep the answer under five sentences.',
];
const TAGS = ['production', 'beta', 'rag', 'agent', 'eval', 'v2', 'canary', 'internal'];
const FEEDBACK_KEYS = ['correctness', 'user_score', 'helpfulness', 'hallucination', 'conciseness'];
const DOC_SITES = ['https://docs.example.com', 'https://help.example.com/articles', 'https://kb.internal.example.net'];

interface ModelInfo {
  provider: string;
  model: string;
  name: string;
  promptPrice: number;
  completionPrice: number;
  tokensPerSecond: number;
}
const MODELS: readonly ModelInfo[] = [
  {
    provider: 'openai',
    model: 'gpt-4o-mini',
    name: 'ChatOpenAI',
    promptPrice: 1.5e-7,
    completionPrice: 6e-7,
    tokensPerSecond: 90,
  },
  {
    provider: 'openai',
    model: 'gpt-4o',
    name: 'ChatOpenAI',
    promptPrice: 2.5e-6,
    completionPrice: 1e-5,
    tokensPerSecond: 60,
  },
  {
    provider: 'openai',
    model: 'gpt-4.1',
    name: 'ChatOpenAI',
    promptPrice: 2e-6,
    completionPrice: 8e-6,
    tokensPerSecond: 55,
  },
  {
    provider: 'anthropic',
    model: 'claude-3-5-sonnet-20241022',
    name: 'ChatAnthropic',
    promptPrice: 3e-6,
    completionPrice: 1.5e-5,
    tokensPerSecond: 50,
  },
  {
    provider: 'anthropic',
    model: 'claude-3-5-haiku-20241022',
    name: 'ChatAnthropic',
    promptPrice: 8e-7,
    completionPrice: 4e-6,
    tokensPerSecond: 80,
  },
  {
    provider: 'google_vertexai',
    model: 'gemini-1.5-flash',
    name: 'ChatVertexAI',
    promptPrice: 7.5e-8,
    completionPrice: 3e-7,
    tokensPerSecond: 120,
  },
];

const RUNTIMES = [
  { sdk: 'langsmith-py', sdk_version: '0.1.147', runtime: 'python', runtime_version: '3.11.9', platform: 'linux' },
  { sdk: 'langsmith-py', sdk_version: '0.2.10', runtime: 'python', runtime_version: '3.12.7', platform: 'linux' },
  { sdk: 'langsmith-js', sdk_version: '0.2.14', runtime: 'node', runtime_version: '20.18.1', platform: 'linux' },
].map((runtime) => JSON.stringify(runtime));
const REVISIONS = ['v1.4.2', 'v1.5.0', 'v1.5.1', 'a3f9c21', '7d0e5b8', 'main-2026-09-30'];

const TOOLS = [
  'search_web',
  'calculator',
  'get_weather',
  'lookup_order',
  'sql_db_query',
  'get_account_status',
  'send_email',
  'python_repl',
];
const RETRIEVERS = ['VectorStoreRetriever', 'PineconeRetriever', 'ElasticsearchRetriever', 'EnsembleRetriever'];
const ROOT_NAMES = {
  single: ['RunnableLambda', 'classify_intent', 'route_question'],
  llm: ['RunnableSequence', 'ChatBot', 'summarize'],
  rag: ['RetrievalQA', 'rag_pipeline', 'RunnableSequence', 'support_bot'],
  agent: ['AgentExecutor', 'LangGraph', 'support_agent'],
  multi: ['research_assistant', 'LangGraph', 'report_writer'],
} as const;

const TRACEBACK_HEAD =
  'Traceback (most recent call last):\n' +
  '  File "/app/.venv/lib/python3.11/site-packages/langchain_core/runnables/base.py", line 3024, in invoke\n' +
  '    input = context.run(step.invoke, input, config)\n' +
  '  File "/app/.venv/lib/python3.11/site-packages/langchain_core/runnables/base.py", line 4713, in invoke\n' +
  '    return self._call_with_config(\n';
const withTraceback = (messages: string[]): string[] => messages.map((message) => `${TRACEBACK_HEAD}  ...\n${message}`);
const ERRORS: Record<RunType, string[]> = {
  llm: withTraceback([
    "openai.RateLimitError: Error code: 429 - {'error': {'message': 'Rate limit reached for gpt-4o-mini in " +
      'organization org-3Xk on tokens per min (TPM): Limit 200000, Used 199412, Requested 1630. Please try again in ' +
      "312ms.', 'type': 'tokens', 'param': None, 'code': 'rate_limit_exceeded'}}",
    'httpx.ReadTimeout: The read operation timed out',
    "anthropic.InternalServerError: Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error', " +
      "'message': 'Overloaded'}}",
    "openai.BadRequestError: Error code: 400 - {'error': {'message': \"This model's maximum context length is " +
      "128000 tokens. However, your messages resulted in 131072 tokens.\", 'type': 'invalid_request_error', " +
      "'param': 'messages', 'code': 'context_length_exceeded'}}",
    'openai.APIConnectionError: Connection error.',
  ]),
  tool: withTraceback([
    'langchain_core.tools.ToolException: Error executing tool sql_db_query: (sqlite3.OperationalError) no such ' +
      'table: orders',
    'httpx.ConnectError: [Errno 111] Connection refused',
    "TypeError: unsupported operand type(s) for +: 'NoneType' and 'str'",
    'requests.exceptions.HTTPError: 404 Client Error: Not Found for url: https://api.example.com/v1/orders/8812',
  ]),
  retriever: withTraceback([
    'httpx.ConnectError: [Errno 111] Connection refused',
    'httpx.ReadTimeout: The read operation timed out',
    "pinecone.exceptions.PineconeApiException: (400) Reason: Bad Request HTTP response body: {'code': 3, " +
      "'message': 'Vector dimension 1536 does not match the dimension of the index 3072'}",
  ]),
  chain: withTraceback([
    "KeyError: 'context'",
    'ValueError: Could not parse LLM output: `I should look up the order status first`',
    "langchain_core.exceptions.OutputParserException: Invalid json output: Expecting ',' delimiter: line 3 column 5 " +
      '(char 41)',
    'GraphRecursionError: Recursion limit of 25 reached without hitting a stop condition. You can increase the ' +
      'limit by setting the `recursion_limit` config key.',
    'asyncio.exceptions.CancelledError',
  ]),
};

// Rates, tuned so that about 5% of runs are errors and about 1% are pending (checked in tests).
const ERROR_TRACE_PROBABILITY = 0.115;
const PENDING_TRACE_PROBABILITY = 0.025;
const FEEDBACK_PROBABILITY = 0.2;
const REFERENCE_EXAMPLE_PROBABILITY = 0.1;
const LONGLIVED_PROBABILITY = 0.15;
const STREAMING_PROBABILITY = 0.3;
const MAX_TRACE_RUNS = 12;

// ---------------------------------------------------------------------------------------
// Fast UTC formatting (the Date object is only touched once per distinct day)
// ---------------------------------------------------------------------------------------

const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const dayCache = new Map<number, { compact: string; iso: string }>();

function dayStrings(day: number): { compact: string; iso: string } {
  let entry = dayCache.get(day);
  if (!entry) {
    const iso = new Date(day * 86_400_000).toISOString().slice(0, 10);
    entry = { compact: iso.replace(/-/g, ''), iso };
    if (dayCache.size > 10_000) dayCache.clear();
    dayCache.set(day, entry);
  }
  return entry;
}

function splitTime(micros: Micros): [day: number, hh: number, mm: number, ss: number, us: number] {
  const day = Math.floor(micros / MICROS_PER_DAY);
  let rest = micros - day * MICROS_PER_DAY;
  const us = rest % 1_000_000;
  rest = (rest - us) / 1_000_000;
  const ss = rest % 60;
  rest = (rest - ss) / 60;
  const mm = rest % 60;
  return [day, (rest - mm) / 60, mm, ss, us];
}

/** `%Y%m%dT%H%M%S%fZ`, the timestamp part of a dotted_order segment. */
export function formatDottedTimestamp(micros: Micros): string {
  const [day, hh, mm, ss, us] = splitTime(micros);
  const fraction = String(us + 1_000_000).slice(1);
  return `${dayStrings(day).compact}T${TWO_DIGITS[hh]}${TWO_DIGITS[mm]}${TWO_DIGITS[ss]}${fraction}Z`;
}

/** Same output as formatTimestamp in shared/time.ts (ISO 8601, microseconds, +00:00), but faster. */
function formatIso(micros: Micros): string {
  const [day, hh, mm, ss, us] = splitTime(micros);
  const fraction = String(us + 1_000_000).slice(1);
  return `${dayStrings(day).iso}T${TWO_DIGITS[hh]}:${TWO_DIGITS[mm]}:${TWO_DIGITS[ss]}.${fraction}+00:00`;
}

// ---------------------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------------------

/** Word pool for running text: roughly 45% filler, 30% nouns, 13% verbs, 12% adjectives. */
const PHRASE_WORDS: readonly string[] = [
  ...Array.from({ length: 90 }, (_, i) => FILLER[i % FILLER.length]!),
  ...Array.from({ length: 60 }, (_, i) => NOUNS[i % NOUNS.length]!),
  ...Array.from({ length: 26 }, (_, i) => VERBS[i % VERBS.length]!),
  ...Array.from({ length: 24 }, (_, i) => ADJECTIVES[i % ADJECTIVES.length]!),
];

function phrase(random: Random, words: number): string {
  let text = PHRASE_WORDS[Math.floor(random() * PHRASE_WORDS.length)]!;
  for (let i = 1; i < words; i++) text += ' ' + PHRASE_WORDS[Math.floor(random() * PHRASE_WORDS.length)]!;
  return text;
}

function sentence(random: Random, minWords: number, maxWords: number): string {
  const text = phrase(random, minWords + Math.floor(random() * (maxWords - minWords + 1)));
  return text.charAt(0).toUpperCase() + text.slice(1) + '.';
}

function paragraph(random: Random, minSentences: number, maxSentences: number): string {
  const n = minSentences + Math.floor(random() * (maxSentences - minSentences + 1));
  const parts: string[] = new Array(n);
  for (let i = 0; i < n; i++) parts[i] = sentence(random, 6, 16);
  return parts.join(' ');
}

function question(random: Random): string {
  return (
    `${pick(random, QUESTION_STARTS)} ${pick(random, VERBS)} ${pick(random, ['a', 'the', 'my', 'our'])} ` +
    `${pick(random, ADJECTIVES)} ${pick(random, NOUNS)} in ${pick(random, PRODUCTS)}?`
  );
}

function answer(random: Random): string {
  return `${pick(random, ANSWER_STARTS)} ${phrase(random, 5 + Math.floor(random() * 8))}. ${paragraph(random, 1, 3)}`;
}

function searchQuery(random: Random): string {
  return `${pick(random, VERBS)} ${pick(random, ADJECTIVES)} ${pick(random, NOUNS)} ${pick(random, NOUNS)}`;
}

function round8(value: number): number {
  return Math.round(value * 1e8) / 1e8;
}

/** Log-uniform duration in microseconds between min and max milliseconds. */
function latency(random: Random, minMs: number, maxMs: number): number {
  return Math.round(minMs * 1000 * Math.exp(random() * Math.log(maxMs / minMs)));
}

// ---------------------------------------------------------------------------------------
// Trace shape
// ---------------------------------------------------------------------------------------

interface RunNode {
  type: RunType;
  name: string;
  parent: number;
  kids: number[];
  /** Overhead before the first child (µs). */
  lead: number;
  /** Idle gap after this run inside its parent (µs). */
  gap: number;
  duration: number;
  start: number;
  status: Status;
  id: string;
  dotted: string;
  ancestors: string[];
  depth: number;
}

function newNode(type: RunType, name: string, parent: number): RunNode {
  return {
    type,
    name,
    parent,
    kids: [],
    lead: 0,
    gap: 0,
    duration: 0,
    start: 0,
    status: 'success',
    id: '',
    dotted: '',
    ancestors: [],
    depth: 0,
  };
}

/** Builds a trace tree in depth-first order (every parent precedes its children). */
function buildShape(random: Random, model: ModelInfo): { nodes: RunNode[]; kind: keyof typeof ROOT_NAMES } {
  const r = random();
  const kind: keyof typeof ROOT_NAMES =
    r < 0.08 ? 'single' : r < 0.28 ? 'llm' : r < 0.58 ? 'rag' : r < 0.83 ? 'agent' : 'multi';
  const nodes: RunNode[] = [newNode('chain', pick(random, ROOT_NAMES[kind]), -1)];
  const add = (type: RunType, name: string, parent: number): number => {
    if (nodes.length >= MAX_TRACE_RUNS) return -1;
    nodes.push(newNode(type, name, parent));
    const index = nodes.length - 1;
    nodes[parent]!.kids.push(index);
    return index;
  };
  switch (kind) {
    case 'single':
      break;
    case 'llm':
      if (random() < 0.4) add('chain', 'ChatPromptTemplate', 0);
      add('llm', model.name, 0);
      if (random() < 0.5) add('chain', 'StrOutputParser', 0);
      break;
    case 'rag': {
      if (random() < 0.35) {
        const ctx = add('chain', 'retrieve_context', 0);
        add('retriever', pick(random, RETRIEVERS), ctx);
        add('chain', 'format_docs', ctx);
      } else {
        add('retriever', pick(random, RETRIEVERS), 0);
        if (random() < 0.5) add('chain', 'format_docs', 0);
      }
      add('llm', model.name, 0);
      if (random() < 0.4) add('chain', 'StrOutputParser', 0);
      break;
    }
    case 'agent': {
      const steps = 1 + Math.floor(random() * 4);
      for (let s = 0; s < steps; s++) {
        add('llm', model.name, 0);
        const tool = add('tool', pick(random, TOOLS), 0);
        if (tool >= 0 && random() < 0.25) add('llm', model.name, tool);
      }
      add('llm', model.name, 0);
      break;
    }
    case 'multi': {
      const research = add('chain', 'research', 0);
      add('retriever', pick(random, RETRIEVERS), research);
      add('llm', model.name, research);
      if (random() < 0.5) {
        const tool = add('tool', 'search_web', research);
        if (tool >= 0) add('llm', model.name, tool);
      }
      const write = add('chain', 'write', 0);
      if (write >= 0) {
        add('llm', model.name, write);
        if (random() < 0.5) add('tool', pick(random, TOOLS), write);
      }
      break;
    }
  }
  return { nodes, kind };
}

/** Keeps nodes [0, keep) only; they stay closed under "parent" because parents come first. */
function truncate(nodes: RunNode[], keep: number): void {
  if (keep >= nodes.length) return;
  nodes.length = keep;
  for (const node of nodes) {
    if (node.kids.length && node.kids[node.kids.length - 1]! >= keep) node.kids = node.kids.filter((k) => k < keep);
  }
}

function markPath(nodes: RunNode[], from: number, status: Status): void {
  for (let i = from; i >= 0; i = nodes[i]!.parent) nodes[i]!.status = status;
}

function leafLatency(random: Random, node: RunNode, isRoot: boolean): number {
  switch (node.type) {
    case 'llm':
      return latency(random, 300, 30_000);
    case 'tool':
      return latency(random, 15, 6_000);
    case 'retriever':
      return latency(random, 40, 2_000);
    case 'chain':
      return isRoot ? latency(random, 20, 3_000) : latency(random, 0.2, 25);
  }
}

// ---------------------------------------------------------------------------------------
// Payloads
// ---------------------------------------------------------------------------------------

interface TraceContext {
  question: string;
  finalAnswer: string;
  model: ModelInfo;
  runtimeJson: string;
  revision: string;
  userId: string;
  tagsJson: string;
  tier: string;
}

function documents(random: Random): object {
  const n = 2 + Math.floor(random() * 3);
  const docs = new Array(n);
  for (let i = 0; i < n; i++) {
    const topic = pick(random, NOUNS).replace(/ /g, '-');
    docs[i] = {
      page_content: `${sentence(random, 8, 20)} ${sentence(random, 8, 20)}`,
      metadata: {
        source: `${pick(random, DOC_SITES)}/${topic}/${pick(random, VERBS)}-${topic}`,
        chunk: Math.floor(random() * 40),
        score: Math.round((0.95 - i * 0.07 - random() * 0.05) * 1000) / 1000,
      },
      type: 'Document',
    };
  }
  return { documents: docs };
}

function inputsFor(random: Random, node: RunNode, ctx: TraceContext, depth: number): string {
  switch (node.type) {
    case 'chain':
      if (depth === 0) {
        return JSON.stringify(
          node.name === 'AgentExecutor' || node.name === 'support_agent'
            ? { input: ctx.question, chat_history: [] }
            : { question: ctx.question },
        );
      }
      if (node.name === 'format_docs')
        return JSON.stringify({ documents: [sentence(random, 6, 12), sentence(random, 6, 12)] });
      if (node.name === 'StrOutputParser') return JSON.stringify({ input: sentence(random, 6, 14) });
      return JSON.stringify({ question: ctx.question, context: sentence(random, 8, 18) });
    case 'llm': {
      const messages: { role: string; content: string }[] = [{ role: 'system', content: pick(random, SYSTEM_PROMPTS) }];
      if (random() < 0.4) messages.push({ role: 'user', content: `Context: ${paragraph(random, 1, 2)}` });
      messages.push({ role: 'user', content: ctx.question });
      return JSON.stringify({ messages });
    }
    case 'tool':
      return JSON.stringify({ query: searchQuery(random) });
    case 'retriever':
      return JSON.stringify({ query: ctx.question });
  }
}

function outputsFor(random: Random, node: RunNode, ctx: TraceContext, depth: number): string {
  switch (node.type) {
    case 'chain':
      if (depth === 0)
        return JSON.stringify(
          node.name === 'AgentExecutor' || node.name === 'support_agent'
            ? { output: ctx.finalAnswer }
            : { answer: ctx.finalAnswer },
        );
      return JSON.stringify({ output: sentence(random, 8, 20) });
    case 'llm': {
      const text = random() < 0.7 ? answer(random) : sentence(random, 6, 14);
      return JSON.stringify({
        generations: [{ message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
        model_name: ctx.model.model,
      });
    }
    case 'tool':
      return JSON.stringify({ output: sentence(random, 6, 18) });
    case 'retriever':
      return JSON.stringify(documents(random));
  }
}

function feedbackStats(random: Random): string {
  const keys = 1 + Math.floor(random() * 2);
  const stats: Record<string, { n: number; avg: number; values: Record<string, number> }> = {};
  for (let k = 0; k < keys; k++) {
    const key = pick(random, FEEDBACK_KEYS);
    const n = 1 + Math.floor(random() * 3);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += random() < 0.7 ? 1 : 0;
    stats[key] = { n, avg: Math.round((sum / n) * 1e4) / 1e4, values: {} };
  }
  return JSON.stringify(stats);
}

function tagsJson(random: Random): string {
  const n = Math.floor(random() * 4);
  if (n === 0) return '[]';
  const tags: string[] = [];
  for (let i = 0; i < n; i++) {
    const tag = pick(random, TAGS);
    if (!tags.includes(tag)) tags.push(tag);
  }
  return JSON.stringify(tags);
}

// ---------------------------------------------------------------------------------------
// The generator
// ---------------------------------------------------------------------------------------

export function* generateRuns(options: GenerateRunsOptions): Generator<RunRow> {
  const { tenantId, sessionId, count, startMicros, days, seed } = options;
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`count must be a non-negative integer, got ${count}`);
  if (!(days > 0)) throw new RangeError(`days must be positive, got ${days}`);
  const random = createRandom(seedFrom('runs', seed, tenantId, sessionId));
  const range = Math.floor(days * MICROS_PER_DAY);
  const rangeEnd = startMicros + range; // exclusive
  // Roots are placed over a slightly shorter span so that even long traces end inside the range
  // without disturbing the increasing order of root start times.
  const span = range - Math.min(Math.floor(range / 10), 15 * 60 * 1_000_000);

  let emitted = 0;
  while (emitted < count) {
    const model = random() < 0.85 ? MODELS[Math.floor(random() * 2)]! : pick(random, MODELS);
    const { nodes, kind } = buildShape(random, model);

    // Errors and pending runs: one run fails (or is still open); its ancestors share the status,
    // and the runs after it in depth-first order never happened (or have not happened yet).
    const statusRoll = random();
    let error: string | null = null;
    if (statusRoll < ERROR_TRACE_PROBABILITY) {
      const failing = nodes.length === 1 ? 0 : 1 + Math.floor(random() * (nodes.length - 1));
      error = pick(random, ERRORS[nodes[failing]!.type]);
      truncate(nodes, failing + 1);
      markPath(nodes, failing, 'error');
    } else if (statusRoll < ERROR_TRACE_PROBABILITY + PENDING_TRACE_PROBABILITY) {
      const open = nodes.length === 1 ? 0 : 1 + Math.floor(random() * (nodes.length - 1));
      truncate(nodes, open + 1);
      markPath(nodes, open, 'pending');
    }
    truncate(nodes, count - emitted);
    const n = nodes.length;

    // Durations bottom-up (children follow parents, so walk backwards).
    for (let i = n - 1; i >= 0; i--) {
      const node = nodes[i]!;
      node.gap = Math.floor(random() * 3_000);
      if (node.kids.length === 0) {
        node.duration = leafLatency(random, node, i === 0);
      } else {
        node.lead = 100 + Math.floor(random() * 2_000);
        let total = node.lead;
        for (const k of node.kids) total += nodes[k]!.duration + nodes[k]!.gap;
        node.duration = total + Math.floor(random() * 1_500);
      }
    }

    // Root start: evenly spread by position in the run sequence, with jitter inside its slot.
    const root = nodes[0]!;
    let rootStart = startMicros + Math.floor(((emitted + random() * n) / count) * span);
    if (rootStart + root.duration >= rangeEnd) rootStart = Math.max(startMicros, rangeEnd - 1 - root.duration);
    root.start = rootStart;

    // Start times top-down; ids, ancestry and dotted order.
    for (let i = 0; i < n; i++) {
      const node = nodes[i]!;
      node.id = uuidFrom(random);
      if (i === 0) {
        node.dotted = formatDottedTimestamp(node.start) + node.id;
      } else {
        const parent = nodes[node.parent]!;
        node.depth = parent.depth + 1;
        node.ancestors = parent.depth === 0 ? [parent.id] : [...parent.ancestors, parent.id];
        node.dotted = `${parent.dotted}.${formatDottedTimestamp(node.start)}${node.id}`;
      }
      let cursor = node.start + node.lead;
      for (const k of node.kids) {
        const kid = nodes[k]!;
        kid.start = cursor;
        cursor += kid.duration + kid.gap;
      }
    }

    const ctx: TraceContext = {
      question: question(random),
      finalAnswer: answer(random),
      model,
      runtimeJson: pick(random, RUNTIMES),
      revision: pick(random, REVISIONS),
      userId: `user_${Math.floor(random() * 5000)}`,
      tagsJson: tagsJson(random),
      tier: random() < LONGLIVED_PROBABILITY ? 'longlived' : 'shortlived',
    };

    const rows: RunRow[] = new Array(n);
    let promptTokens = 0;
    let completionTokens = 0;
    let promptCost = 0;
    let completionCost = 0;
    for (let i = 0; i < n; i++) {
      const node = nodes[i]!;
      const isRoot = i === 0;
      const end = node.status === 'pending' ? null : node.start + node.duration;
      const row: RunRow = {
        id: node.id,
        tenant_id: tenantId,
        session_id: sessionId,
        trace_id: root.id,
        parent_run_id: isRoot ? null : nodes[node.parent]!.id,
        parent_run_ids: isRoot ? '[]' : JSON.stringify(node.ancestors),
        reference_example_id: isRoot && random() < REFERENCE_EXAMPLE_PROBABILITY ? uuidFrom(random) : null,
        name: node.name,
        run_type: node.type,
        start_time: node.start,
        end_time: end,
        status: node.status,
        is_root: isRoot ? 1 : 0,
        dotted_order: node.dotted,
        trace_tier: ctx.tier,
        inputs: inputsFor(random, node, ctx, node.depth),
        outputs: node.status === 'success' ? outputsFor(random, node, ctx, node.depth) : null,
        error: node.status === 'error' ? error : null,
        extra: null,
        events: null,
        tags: isRoot || random() < 0.5 ? ctx.tagsJson : '[]',
        feedback_stats: isRoot && random() < FEEDBACK_PROBABILITY ? feedbackStats(random) : null,
        total_tokens: null,
        prompt_tokens: null,
        completion_tokens: null,
        total_cost: null,
        prompt_cost: null,
        completion_cost: null,
        first_token_time: null,
      };

      const metadata: Record<string, string | number> = { revision_id: ctx.revision, user_id: ctx.userId };
      // Events hold only fixed names, timestamps and word-list tokens (no characters that need
      // escaping), so they are built as text; the tests parse every events value.
      let events = `[{"name":"start","time":"${formatIso(node.start)}"}`;

      if (node.type === 'llm') {
        metadata.ls_provider = model.provider;
        metadata.ls_model_name = model.model;
        metadata.ls_temperature = random() < 0.5 ? 0 : 0.7;
        if (node.status !== 'pending') {
          const prompt = (kind === 'rag' || kind === 'multi' ? 600 : 80) + Math.floor(random() * 2500);
          // First token after 10–60% of the call; completion length follows the generation time.
          const ttft = node.status === 'success' ? Math.floor(node.duration * (0.1 + random() * 0.5)) : -1;
          const completion =
            ttft < 0
              ? 0
              : Math.max(1, Math.round(((node.duration - ttft) / 1e6) * model.tokensPerSecond * (0.5 + random())));
          const pCost = round8(prompt * model.promptPrice);
          const cCost = round8(completion * model.completionPrice);
          row.prompt_tokens = prompt;
          row.completion_tokens = completion;
          row.total_tokens = prompt + completion;
          row.prompt_cost = pCost;
          row.completion_cost = cCost;
          row.total_cost = round8(pCost + cCost);
          promptTokens += prompt;
          completionTokens += completion;
          promptCost += pCost;
          completionCost += cCost;
          if (ttft >= 0) {
            row.first_token_time = node.start + ttft;
            if (random() < STREAMING_PROBABILITY) {
              const tokens = 3 + Math.floor(random() * 6);
              const step = Math.floor((node.duration - ttft) / (tokens + 1));
              for (let t = 0; t < tokens; t++) {
                const time = formatIso(node.start + ttft + t * step);
                events += `,{"name":"new_token","time":"${time}","kwargs":{"token":"${pick(random, FILLER)}"}}`;
              }
            }
          }
        }
      }
      if (end !== null) events += `,{"name":"${node.status === 'error' ? 'error' : 'end'}","time":"${formatIso(end)}"}`;
      row.extra = `{"metadata":${JSON.stringify(metadata)},"runtime":${ctx.runtimeJson}}`;
      row.events = events + ']';
      rows[i] = row;
    }

    // Roots carry the totals over their trace's llm runs.
    rows[0]!.prompt_tokens = promptTokens;
    rows[0]!.completion_tokens = completionTokens;
    rows[0]!.total_tokens = promptTokens + completionTokens;
    rows[0]!.prompt_cost = round8(promptCost);
    rows[0]!.completion_cost = round8(completionCost);
    rows[0]!.total_cost = round8(promptCost + completionCost);

    for (let i = 0; i < n; i++) yield rows[i]!;
    emitted += n;
  }
}

// ---------------------------------------------------------------------------------------
// Insertion
// ---------------------------------------------------------------------------------------

const INSERT_SQL = `INSERT INTO runs (${RUN_COLUMNS.join(', ')}) VALUES (${RUN_COLUMNS.map(() => '?').join(', ')})`;
/**
 * Rows per transaction. Each commit rewrites (and journals) every page it touched, and the
 * random-UUID primary key spreads inserts over the whole `id` index, so small transactions
 * multiply disk writes as the table grows: for 1,000,000 runs into a file, 5,000-row
 * transactions wrote about 7.2 GB and 50,000-row ones about 2.6 GB. Rows are streamed, not
 * buffered, so the size does not change memory use.
 */
const DEFAULT_BATCH_SIZE = 50_000;

/**
 * Inserts rows into the `runs` table of `db` in transactions of `batchSize` rows (default
 * 50,000) with one prepared statement; returns how many were inserted. Rows are pulled from
 * `rows` lazily inside each transaction, so a generator of any length uses flat memory.
 * `eachRun` is given each run once inserted, `afterBatch` runs at the end of each transaction.
 */
export function insertRuns(
  db: BetterSqlite3.Database,
  rows: Iterable<RunRow>,
  options: { batchSize?: number; eachRun?: (run: RunRow) => void; afterBatch?: () => void } = {},
): number {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  if (!(batchSize >= 1)) throw new RangeError(`batchSize must be at least 1, got ${batchSize}`);
  const statement = db.prepare(INSERT_SQL);
  const { eachRun, afterBatch } = options;
  const iterator = rows[Symbol.iterator]();
  let inserted = 0;
  let done = false;
  // Rows are pulled from the iterator inside the transaction, so nothing is buffered.
  const insertBatch = db.transaction(() => {
    for (let i = 0; i < batchSize; i++) {
      const next = iterator.next();
      if (next.done) {
        done = true;
        break;
      }
      const r = next.value;
      statement.run(
        r.id,
        r.tenant_id,
        r.session_id,
        r.trace_id,
        r.parent_run_id,
        r.parent_run_ids,
        r.reference_example_id,
        r.name,
        r.run_type,
        r.start_time,
        r.end_time,
        r.status,
        r.is_root,
        r.dotted_order,
        r.trace_tier,
        r.inputs,
        r.outputs,
        r.error,
        r.extra,
        r.events,
        r.tags,
        r.feedback_stats,
        r.total_tokens,
        r.prompt_tokens,
        r.completion_tokens,
        r.total_cost,
        r.prompt_cost,
        r.completion_cost,
        r.first_token_time,
      );
      eachRun?.(r);
      inserted++;
    }
    afterBatch?.();
  });
  try {
    while (!done) insertBatch();
  } finally {
    if (!done) iterator.return?.();
  }
  return inserted;
}
