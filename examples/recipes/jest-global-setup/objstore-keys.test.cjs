const api = process.env.LOCALPLANE_URL;

// The run's instance (localplane/jest/global-setup), reset before each test (localplane/jest/reset-between-tests).
const keys = async () => (await fetch(`${api}/_localplane/objstore/keys`)).json();
const keyIds = async () => (await keys()).map((key) => key.access_key_id);

test('a key pair added at run time is listed, without its secret', async () => {
  const response = await fetch(`${api}/_localplane/objstore/keys`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      access_key_id: 'RECIPEKEY00000000001',
      secret_access_key: 'recipe-secret',
      permissions: ['create', 'get'],
    }),
  });
  expect(response.status).toBe(201);
  expect(await keyIds()).toContain('RECIPEKEY00000000001');
  expect(JSON.stringify(await keys())).not.toContain('recipe-secret');
});

test('reset puts the seeded key pairs back', async () => {
  expect(await keyIds()).not.toContain('RECIPEKEY00000000001');
});

test("the instance has the options the config's globals give it", async () => {
  expect((await (await fetch(`${api}/_localplane/clock`)).json()).frozen).toBe(true);
});
