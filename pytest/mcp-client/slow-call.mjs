// The part of the SDK scenarios both client generations share: one call of
// corpus_raw (800 ms) with progress, then one cancelled after 300 ms.
// call(options) makes that call with the SDK's request options.
export async function progressThenCancel(call, countTools) {
  const progress = [];
  const slow = await call({ onprogress: (p) => progress.push(p) });
  const abort = new AbortController();
  const pending = call({ signal: abort.signal });
  setTimeout(() => abort.abort("test cancels"), 300);
  let cancelled = "not cancelled";
  try {
    await pending;
  } catch (e) {
    cancelled = String(e.message);
  }
  return { progress, slow, cancelled, afterCancel: await countTools() };
}
