/**
 * An API answer's JSON as most of the suite reads it: untyped. A test asserts on the fields it reads, and the clients
 * that go over HTTP check every answer against the served OpenAPI document first. The clients' type parameters default
 * to this; a caller that wants the compiler to check what it reads names a type (`api.get<FixturesView>(...)`).
 * Typing every read (about a thousand, in some sixty files) is a task of its own.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the suite's one untyped JSON type, see above
export type UntypedJson = any;
