// A stand-in for src/search/local-worker.mjs that misbehaves on request, to test how the pool of
// the local embedder handles broken workers. Same protocol: {id, texts} → {id, vectors} | {id, error}.
import { parentPort } from 'node:worker_threads';

parentPort.on('message', ({ id, texts }) => {
  if (texts.includes('exit')) process.exit(3);
  if (texts.includes('throw')) throw new Error('boom');
  if (texts.includes('error')) return parentPort.postMessage({ id, error: 'model failed to load' });
  if (texts.includes('short')) return parentPort.postMessage({ id, vectors: [] });
  const vectors = texts.map((_, i) => Float32Array.from({ length: 384 }, (_, j) => (j === i ? 2 : 0)));
  parentPort.postMessage({ id, vectors });
});
