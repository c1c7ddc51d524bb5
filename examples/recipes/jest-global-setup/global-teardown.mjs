export default async function globalTeardown() {
  await globalThis.localplane.stop();
}
