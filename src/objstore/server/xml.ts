/**
 * S3's XML documents, rendered and parsed with fast-xml-parser: result documents (declaration,
 * S3 namespace on the root), error documents, and the request documents clients send
 * (CompleteMultipartUpload, Delete, CreateBucketConfiguration, ...). A request document that is
 * not well-formed XML, has another root or elements nested over 100 deep, is S3's MalformedXML (400).
 */
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';

type FastXmlParser = typeof import('fast-xml-parser');
let fastXmlParser: FastXmlParser | null = null;
// The package's CommonJS build is one bundled file (its ES module build is dozens), required on
// first use: a start renders no XML.
const xmlLibrary = () => (fastXmlParser ??= createRequire(import.meta.url)('fast-xml-parser') as FastXmlParser);

import { errors, GatewayError, type S3ErrorSpec } from '../s3-errors.ts';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';
const S3_NAMESPACE = 'http://s3.amazonaws.com/doc/2006-03-01/';

/** An element's text (numbers and booleans written as S3 writes them). */
export type XmlText = string | number | boolean;
/**
 * An element's children, in document order: text, nested content, or a list for an element
 * repeated in place (an empty list writes nothing); `undefined` leaves the element out.
 */
export interface XmlContent {
  readonly [element: string]: XmlText | XmlContent | readonly (XmlText | XmlContent)[] | undefined;
}

// Entities escaped: & < > " ' (processEntities); an empty string is written `<A></A>`, as S3 does.
let builder: InstanceType<FastXmlParser['XMLBuilder']> | null = null;
const xmlBuilder = () =>
  (builder ??= new (xmlLibrary().XMLBuilder)({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    suppressEmptyNode: false,
    format: false,
  }));

/**
 * `<?xml ...?>\n<root xmlns="...">content</root>`: an S3 result document (a few, e.g. LocationConstraint, hold only
 * text).
 */
export function renderResult(root: string, content: XmlContent | string): string {
  const children = typeof content === 'string' ? { '#text': content } : content;
  return `${DECLARATION}\n${xmlBuilder().build({ [root]: { '@xmlns': S3_NAMESPACE, ...children } })}`;
}

/** The ids S3 gives every response: `x-amz-request-id` and `x-amz-id-2`, repeated in error documents. */
export interface ResponseIds {
  requestId: string;
  hostId: string;
}

/** `<?xml ...?><Error>...</Error>`: an S3 error document. */
export function renderError(error: S3ErrorSpec, resource: string, { requestId, hostId }: ResponseIds): string {
  const content: XmlContent = {
    Code: error.code,
    Message: error.message,
    ...Object.fromEntries(error.details ?? []),
    Resource: resource,
    RequestId: requestId,
    HostId: hostId,
  };
  return DECLARATION + xmlBuilder().build({ Error: content });
}

/**
 * Writes an S3 XML error response. HEAD requests get the status and headers only, like S3.
 * Does nothing if a response has already been started.
 */
export function sendError(
  res: ServerResponse,
  method: string,
  error: S3ErrorSpec,
  resource: string,
  ids: ResponseIds,
): void {
  if (res.headersSent || res.writableEnded) return;
  res.statusCode = error.status;
  res.setHeader('Content-Type', 'application/xml');
  if (method === 'HEAD') {
    res.end();
    return;
  }
  const body = renderError(error, resource, ids);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** Answers an S3 result document, with 200 unless told otherwise. */
export function sendXmlResult(res: ServerResponse, root: string, content: XmlContent | string, status = 200): void {
  const body = renderResult(root, content);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/xml');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** A parsed request element: its children by name (an element given twice is a list), or its text. */
export type XmlNode = string | XmlElement | XmlNode[];
export interface XmlElement {
  readonly [child: string]: XmlNode;
}

/**
 * The validator accepts any `&name;`; XML itself defines only these five names (beside numeric
 * references), so any other one is not well-formed.
 */
const UNDEFINED_ENTITY = /&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)/;

/**
 * The children of the root element of a request document, the root checked to be `root`.
 * Attributes (the namespace) are dropped; texts are kept as sent (never converted to numbers, and
 * untrimmed unless `trim`), with entity and character references resolved. Elements named in
 * `lists` are always lists, even when given once.
 */
export function parseRequestDocument(
  body: string,
  root: string,
  lists: readonly string[] = [],
  { trim = false } = {},
): XmlElement {
  const { XMLParser, XMLValidator } = xmlLibrary();
  if (XMLValidator.validate(body) !== true || UNDEFINED_ENTITY.test(body))
    throw new GatewayError(errors.malformedXml());
  const listed = new Set(lists);
  const parser = new XMLParser({
    ignoreAttributes: true,
    ignoreDeclaration: true,
    parseTagValue: false,
    trimValues: trim,
    // Also resolves numeric character references (the named HTML entities never get here, see UNDEFINED_ENTITY).
    htmlEntities: true,
    isArray: (name) => listed.has(name),
  });
  let document: Record<string, unknown>;
  try {
    document = parser.parse(body) as Record<string, unknown>;
  } catch {
    // What the validator lets through and the parser still refuses: elements nested deeper than
    // it builds (100 levels), or named like the JavaScript properties it guards (`__proto__`).
    throw new GatewayError(errors.malformedXml());
  }
  const roots = Object.keys(document);
  const content = document[root];
  // Two roots of the same name parse as a list.
  if (roots.length !== 1 || content === undefined || Array.isArray(content))
    throw new GatewayError(errors.malformedXml());
  // An element with no children and no text parses as ''.
  return typeof content === 'string' ? {} : (content as XmlElement);
}

/** The text of a child element that has no children of its own; undefined when it is missing or not plain text. */
export function childText(element: XmlElement, name: string): string | undefined {
  const child = element[name];
  return typeof child === 'string' ? child : undefined;
}

/** The elements among a list of children (texts are not elements: `<Part>x</Part>`). */
export function childElements(element: XmlElement, name: string): (XmlElement | string)[] {
  const child = element[name];
  return child === undefined
    ? []
    : Array.isArray(child)
      ? (child as (XmlElement | string)[])
      : [child as XmlElement | string];
}
