/** The company directory, symbol -> names (`?`: a common-word name); a symbol given twice fails at load. */
import base from './resources/companies.json' with { type: 'json' };
import asiaAmericas from './resources/directory/asia-americas.json' with { type: 'json' };
import asiaB from './resources/directory/asia-b.json' with { type: 'json' };
import australiaB from './resources/directory/australia-b.json' with { type: 'json' };
import europe from './resources/directory/europe.json' with { type: 'json' };
import europeB from './resources/directory/europe-b.json' with { type: 'json' };
import intlC from './resources/directory/intl-c.json' with { type: 'json' };
import japanB from './resources/directory/japan-b.json' with { type: 'json' };
import uk from './resources/directory/uk.json' with { type: 'json' };
import ukB from './resources/directory/uk-b.json' with { type: 'json' };
import usB from './resources/directory/us-b.json' with { type: 'json' };
import usC from './resources/directory/us-c.json' with { type: 'json' };
import usMid from './resources/directory/us-mid.json' with { type: 'json' };
import usSmallAL from './resources/directory/us-small-a-l.json' with { type: 'json' };
import usSmallMZ from './resources/directory/us-small-m-z.json' with { type: 'json' };

/** Each file's companies, by file name (a new file of resources/directory/ is added here; a test checks). */
export const DIRECTORY_FILES: ReadonlyMap<string, Record<string, string>> = new Map<string, Record<string, string>>([
  ['companies.json', base.companies as Record<string, string>],
  ['us-mid.json', usMid.companies],
  ['us-small-a-l.json', usSmallAL.companies],
  ['us-small-m-z.json', usSmallMZ.companies],
  ['uk.json', uk.companies],
  ['europe.json', europe.companies],
  ['asia-americas.json', asiaAmericas.companies],
  ['us-b.json', usB.companies],
  ['uk-b.json', ukB.companies],
  ['europe-b.json', europeB.companies],
  ['japan-b.json', japanB.companies],
  ['australia-b.json', australiaB.companies],
  ['asia-b.json', asiaB.companies],
  ['us-c.json', usC.companies],
  ['intl-c.json', intlC.companies],
]);

export function mergeDirectory(files: ReadonlyMap<string, Record<string, string>>): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  const owner = new Map<string, string>();
  for (const [file, companies] of files) {
    for (const [symbol, names] of Object.entries(companies)) {
      const first = owner.get(symbol);
      if (first !== undefined) throw new Error(`company directory: ${symbol} is in both ${first} and ${file}`);
      owner.set(symbol, file);
      out.set(symbol, names);
    }
  }
  return out;
}

/** Symbol -> names separated by `|`, every file merged. */
export const COMPANIES: ReadonlyMap<string, string> = mergeDirectory(DIRECTORY_FILES);

/** Lower-case words that veto a name when they follow it (`Apple pie`) or precede it (`Big Apple`). */
export const NOT_FOLLOWED_BY = new Map<string, readonly string[]>(Object.entries(base.notFollowedBy));
export const NOT_PRECEDED_BY = new Map<string, readonly string[]>(Object.entries(base.notPrecededBy));
