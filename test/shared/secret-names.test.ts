import { describe, expect, it } from 'vitest';
import { maskSecretQueryValues, maskSigningDetails } from '../../src/journal/entries.ts';
import { isSecretName, maskSecretFields } from '../../src/shared/secret-names.ts';

/** Names whose values the journal, the request log and recordings mask, as JSON keys, query parameters and headers. */
const SECRET = [
  // One word of the name is a secret word.
  'access_token',
  'X-Custom-Token',
  'clientSecret',
  'password',
  'PASSWORD',
  'passwd',
  'db.password',
  'user password',
  'newPassword',
  'apikey',
  'Authorization',
  'Proxy-Authorization',
  'Cookie',
  'Set-Cookie',
  'X-Amz-Signature',
  'X-Amz-Security-Token',
  'X-Amz-Credential',
  'credentials',
  'client_credential',
  'refresh_token',
  'id_token',
  'token_count',
  'SECRET_KEY',
  'x-csrf-token',
  // Two words in a row are a secret pair.
  'api_key',
  'apiKey',
  'APIKey',
  'XApiKey',
  'x-api-key',
  'private_key',
  'privateKey',
  'PRIVATE_KEY',
  'session_token',
  'sessionToken',
  // Listed before the rule.
  'secrets',
  'Secrets',
  'token',
  'x-amz-server-side-encryption-customer-key',
  'x-amz-copy-source-server-side-encryption-customer-key',
];

const NOT_SECRET = [
  // `tokens`, `signatures`: another word than the secret one.
  'total_tokens',
  'prompt_tokens',
  'completion_tokens',
  'tokens',
  'max_tokens',
  'tokenizer',
  'signatures',
  'passwordless',
  'author',
  'authorized',
  // A key, not a secret.
  'access_key_id',
  'accessKeyId',
  'public_key',
  'key',
  'x-amz-server-side-encryption-customer-key-md5',
  'session_id',
  'sessionId',
  'api_version',
  'x-api-version',
  'X-Amz-SignedHeaders',
  'x-amz-content-sha256',
  'X-Tenant-Id',
  'content-type',
  // The hosted service's fields that read as secrets and hold none.
  'token_url',
  'token_endpoint_auth_method',
  'secret_references',
  'credentials_keys',
];

describe('isSecretName', () => {
  it.each(SECRET)('%s is secret', (name) => expect(isSecretName(name)).toBe(true));
  it.each(NOT_SECRET)('%s is not', (name) => expect(isSecretName(name)).toBe(false));
});

describe('masking by name', () => {
  it("masks JSON values at any depth, keeps the hosted service's kept names whole", () => {
    const value = {
      usage: { total_tokens: 7, prompt_tokens: 3 },
      items: [{ auth: { clientSecret: 's1', session_id: 'id' } }],
      secret_references: [{ name: 'DB_PASSWORD', secret_name: 'db', secret_key: 'password' }],
      token_url: 'https://auth.example/token',
    };
    const masked = { ...value, items: [{ auth: { clientSecret: '********', session_id: 'id' } }] };
    expect(maskSecretFields(value, () => '********')).toEqual(masked);
  });

  it(
    'masks a secret at the bottom of JSON nested 100,000 levels deep, as at any other depth, without a stack ' +
      'overflow',
    () => {
      const depth = 100_000;
      const value = JSON.parse(
        `${'{"a":'.repeat(depth)}{"password":"x","token_url":"u","n":[1]}${'}'.repeat(depth)}`,
      ) as unknown;
      let bottom = maskSecretFields(value, () => '********') as Record<string, unknown>;
      for (let level = 0; level < depth; level++) bottom = bottom.a as Record<string, unknown>;
      expect(bottom).toEqual({ password: '********', token_url: 'u', n: [1] });
    },
  );

  it('keeps a `__proto__` key as a field of its own, and masks what it holds', () => {
    const masked = maskSecretFields(JSON.parse('{"__proto__":{"password":"x","id":1}}'), () => '********') as object;
    expect(Object.getPrototypeOf(masked)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(masked, '__proto__')?.value).toEqual({ password: '********', id: 1 });
  });

  it('masks secret query parameters in any text, and the secret header lines a canonical request quotes', () => {
    const heard: string[] = [];
    const text = 'https://h/p?a=1&access_token=t1&Password=p%201&total_tokens=5&xsignature=s1 "api_key=k1"';
    expect(maskSecretQueryValues(text, (name) => heard.push(name))).toBe(
      'https://h/p?a=1&access_token=********&Password=********&total_tokens=5&xsignature=******** "api_key=********"',
    );
    expect(heard).toEqual(['access_token', 'password', 'xsignature', 'api_key']);
    // A URL in another parameter's value is searched too.
    expect(maskSecretQueryValues('/cb?next=https://h/?api_key=k2&state=s')).toBe(
      '/cb?next=https://h/?api_key=********&state=s',
    );
    const signed = (token: string) =>
      `<CanonicalRequest>GET\n/b/k\n\nhost:h:9401\nx-custom-token:${token}\nx-amz-date:20261004T0Z\n` +
      '</CanonicalRequest>';
    expect(maskSigningDetails(signed('t2'))).toBe(signed('********'));
  });
});
