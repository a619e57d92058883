// A worker whose script fails while loading (as a missing package would).
throw new Error('cannot load the engine');
