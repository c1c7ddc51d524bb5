import { describe, expect, it } from 'vitest';

import { GatewayError } from '../../src/objstore/s3-errors.ts';
import {
  childElements,
  childText,
  parseRequestDocument,
  renderError,
  renderResult,
} from '../../src/objstore/server/xml.ts';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';
const NS = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"';

const codeOf = (parse: () => unknown): string | null => {
  try {
    parse();
    return null;
  } catch (error) {
    return error instanceof GatewayError ? error.spec.code : 'not a GatewayError';
  }
};

describe('S3 XML documents', () => {
  it('renders a result in document order: escaped text, repeated elements, left-out and empty ones', () => {
    expect(
      renderResult('ListBucketResult', {
        Name: 'b',
        Prefix: '',
        Marker: undefined,
        IsTruncated: false,
        Contents: [
          { Key: `a<b>&"c'`, Size: 1 },
          { Key: 'd', Size: 2 },
        ],
        CommonPrefixes: [],
      }),
    ).toBe(
      `${DECLARATION}\n<ListBucketResult ${NS}><Name>b</Name><Prefix></Prefix><IsTruncated>false</IsTruncated>` +
        '<Contents><Key>a&lt;b&gt;&amp;&quot;c&apos;</Key><Size>1</Size></Contents>' +
        '<Contents><Key>d</Key><Size>2</Size></Contents></ListBucketResult>',
    );
    expect(renderResult('LocationConstraint', 'eu-west-1')).toBe(
      `${DECLARATION}\n<LocationConstraint ${NS}>eu-west-1</LocationConstraint>`,
    );
  });

  it('renders an error with its details before Resource, RequestId and HostId', () => {
    const spec = {
      status: 403,
      code: 'SignatureDoesNotMatch',
      message: 'x & y',
      details: [['AWSAccessKeyId', 'AK']] as const,
    };
    expect(renderError(spec, '/b/k', { requestId: 'RID', hostId: 'HID+/=' })).toBe(
      `${DECLARATION}<Error><Code>SignatureDoesNotMatch</Code><Message>x &amp; ` +
        `y</Message><AWSAccessKeyId>AK</AWSAccessKeyId><Resource>/b/k</Resource>` +
        `<RequestId>RID</RequestId><HostId>HID+/=</HostId></Error>`,
    );
  });

  it('parses a request document: texts as sent, references resolved, listed names always lists', () => {
    const request = parseRequestDocument(
      `<?xml version="1.0"?>\n<CompleteMultipartUpload ${NS}><Part><PartNumber> 0007 ` +
        `</PartNumber><ETag>&quot;e&#x41;&#66;&quot;</ETag></Part></CompleteMultipartUpload>`,
      'CompleteMultipartUpload',
      ['Part'],
    );
    const [part] = childElements(request, 'Part');
    expect(typeof part === 'object' && childText(part, 'PartNumber')).toBe(' 0007 ');
    expect(typeof part === 'object' && childText(part, 'ETag')).toBe('"eAB"');
    expect(parseRequestDocument('<Delete/>', 'Delete')).toEqual({});
  });

  it('refuses what is not one well-formed document with the expected root as MalformedXML', () => {
    for (const body of [
      '',
      'not xml',
      '<Delete>',
      '<Delete></Other>',
      '<Delete/><Delete/>',
      '<Other/>',
      '<Delete>a & b</Delete>',
      '<Delete>&nbsp;</Delete>',
    ]) {
      expect(
        codeOf(() => parseRequestDocument(body, 'Delete')),
        body,
      ).toBe('MalformedXML');
    }
  });
});
