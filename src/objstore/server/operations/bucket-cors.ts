/**
 * PutBucketCors, GetBucketCors, DeleteBucketCors and the preflights (OPTIONS) their rules answer
 * (cors.ts). A preflight needs no authentication and is answered whether the bucket exists or not,
 * as S3 answers it; the gateway holds a browser's other requests to the same rules (admitBrowser).
 */
import { errors, GatewayError } from '../../s3-errors.ts';
import { corsConfigurationContent, corsHeaders, corsRulesOf, matchCorsRule, parseCorsConfiguration } from '../cors.ts';
import { renderResult, sendXmlResult } from '../xml.ts';
import { endEmpty, type OperationContext, type OperationHandler } from './context.ts';

/** S3 takes at most 100 rules: a few KiB. */
const MAX_CONFIGURATION_BYTES = 64 * 1024;

/** Replaces the bucket's rules; the document is kept as GetBucketCors answers it. */
export const putBucketCors: OperationHandler = async (ctx) => {
  const rules = parseCorsConfiguration((await ctx.readBody(MAX_CONFIGURATION_BYTES)).toString('utf8'));
  await ctx.storage.setBucketCors(
    ctx.target.bucket!,
    renderResult('CORSConfiguration', corsConfigurationContent(rules)),
  );
  endEmpty(ctx, 200);
};

export const getBucketCors: OperationHandler = async (ctx) => {
  const bucket = ctx.target.bucket!;
  const rules = await corsRulesOf(ctx.storage, bucket);
  if (rules === null) throw new GatewayError(errors.noSuchCorsConfiguration(bucket));
  sendXmlResult(ctx.exchange.res, 'CORSConfiguration', corsConfigurationContent(rules));
};

/** 204 whether the bucket had rules or not, as S3 answers. */
export const deleteBucketCors: OperationHandler = async (ctx) => {
  await ctx.storage.setBucketCors(ctx.target.bucket!, null);
  endEmpty(ctx, 204);
};

function header(ctx: OperationContext, name: string): string | undefined {
  const value = ctx.exchange.req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * A preflight: the rule allowing its origin, method and every header it names (in any case)
 * answers with its `Access-Control-*` headers and no body; 400 without `Origin` or
 * `Access-Control-Request-Method`, 403 CORSResponse when the bucket has no rules or none allows it.
 */
export const optionsObject: OperationHandler = async (ctx) => {
  const origin = header(ctx, 'origin');
  if (!origin) throw new GatewayError(errors.preflightWithoutOrigin());
  const method = header(ctx, 'access-control-request-method');
  if (!method) throw new GatewayError(errors.preflightWithoutMethod());
  const rules = ctx.target.bucket === null ? null : await corsRulesOf(ctx.storage, ctx.target.bucket);
  if (rules === null) throw new GatewayError(errors.corsNotEnabled());
  const listed = header(ctx, 'access-control-request-headers');
  const requestHeaders = listed
    ? listed
        .split(',')
        .map((name) => name.trim().toLowerCase())
        .filter(Boolean)
    : [];
  const rule = matchCorsRule(rules, origin, method, requestHeaders);
  if (rule === undefined) throw new GatewayError(errors.corsNotAllowed());
  endEmpty(ctx, 200, {
    ...corsHeaders(rule, origin),
    ...(listed ? { 'Access-Control-Allow-Headers': requestHeaders.join(', ') } : {}),
  });
};
