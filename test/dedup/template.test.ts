/**
 * The generic near-duplicate guards, one `describe` per rule: a template reused with one or
 * two words changed, two actors with their roles swapped, a preview against the event, a forecast of a figure
 * against the figure, the subject company absent from the other headline, the stage of a case, a denial, the span
 * of a report; and the forms folded so that a rewording is not taken for a changed slot. Examples written for
 * these tests (none is a held-out pair of eval/).
 */
import { describe, expect, it } from 'vitest';
import { isNearDuplicate, prepare } from '../../src/dedup/near.js';
import {
  forecastConflict,
  oneSlotConflict,
  previewConflict,
  qualifierConflict,
  roleConflict,
  subjectConflict,
  templateDiff,
} from '../../src/dedup/similarity.js';

const pair = (a: string, b: string) => [prepare(a), prepare(b)] as const;

describe('near-duplicate guard: one template, one or two words changed', () => {
  it.each([
    ['Swiss franc rises to three-week high against euro', 'Swedish krona rises to three-week high against euro'],
    ['US PCE prices rise 0.3% in October', 'US PPI rises 0.3% in October'],
    ['Dockworkers begin strike at Antwerp port', 'Dockworkers end strike at Antwerp port'],
    ['Samsung confirms plan for tri-fold phone', 'Samsung denies plan for tri-fold phone'],
    ['Heating oil futures jump 4% on cold snap', 'Jet fuel futures jump 4% on cold snap'],
  ])('%s / %s: another story', (a, b) => {
    const [pa, pb] = pair(a, b);
    expect(oneSlotConflict(pa, pb)).toBe(true);
    expect(isNearDuplicate(a, b)).toBe(false);
  });
  it('the slot is read in headline order: where it starts and what each side holds', () => {
    const [pa, pb] = pair('Dockworkers begin strike at Antwerp port', 'Dockworkers end strike at Antwerp port');
    const d = templateDiff(pa, pb);
    expect([d.substitutions, d.inserted, d.slots.map((s) => [s.a, s.b])]).toEqual([1, 0, [[['begin'], ['end']]]]);
  });
  it('a reason told otherwise after the main clause is no changed slot', () => {
    const [pa, pb] = pair(
      'Adobe raises annual revenue forecast on AI demand',
      'Adobe lifts full-year sales outlook as AI tools sell',
    );
    expect(oneSlotConflict(pa, pb)).toBe(false);
  });
  it('a rewording that also adds words is no template reuse', () => {
    const [pa, pb] = pair('Fed holds rates steady', 'Federal Reserve holds interest rates steady for fourth meeting');
    expect(oneSlotConflict(pa, pb)).toBe(false);
  });
  it.each([
    ['Siemens cuts 2026 margin forecast', 'Siemens cuts full-year margin forecast'],
    ['Copper price highest in 14 years', 'Copper price highest since 2011'],
  ])('one period written two ways is explained: %s / %s', (a, b) => {
    const [pa, pb] = pair(a, b);
    expect(oneSlotConflict(pa, pb)).toBe(false);
  });
});

describe('near-duplicate forms folded before the slot test', () => {
  it.each([
    ['Brazil economy grows 0.4% in third quarter', 'Brazil GDP grows 0.4% in Q3'],
    ['Brent crude rises 1% to $70', 'Brent oil rises 1% to $70'],
    ['Italy industrial output falls 0.5% in May', 'Italy factory output falls 0.5% in May'],
    ['Bank of Canada holds key rate at 2.25%', 'Bank of Canada holds policy rate at 2.25%'],
    ['Gold rises to $4,100 an ounce', 'Gold climbs to $4,100/oz'],
    ['Target same-store sales fall 3%', 'Target comparable sales drop 3%'],
    ['Shell raises buyback again', 'Shell lifts buyback for a second time'],
    ['Oracle quarterly revenue misses estimates', 'Oracle quarterly sales come in below forecasts'],
    ['Uber trips rise 18%, topping estimates', 'Uber trips climb 18%, ahead of forecasts'],
    ['GM to invest $4 billion in US plants', 'GM to spend $4 billion on US factories'],
    ['Tesla shares slump 8% after deliveries miss', 'Tesla stock sinks 8% as deliveries disappoint'],
    ['Boeing CEO Ortberg says 737 output to rise', 'Boeing chief Ortberg says 737 production to increase'],
    ['Apple faces EU fine over App Store rules', 'Apple hit with EU penalty over App Store rules'],
  ])('%s = %s', (a, b) => {
    expect(isNearDuplicate(a, b)).toBe(true);
  });
});

describe('near-duplicate guard: two actors with their roles swapped', () => {
  it.each([
    ['Epic sues Apple over app store fees', 'Apple sues Epic over app store fees'],
    ['Mexico imposes 30% tariffs on US corn', 'US imposes 30% tariffs on Mexican corn'],
  ])('%s / %s: another story', (a, b) => {
    const [pa, pb] = pair(a, b);
    expect(roleConflict(pa, pb)).toBe(true);
    expect(isNearDuplicate(a, b)).toBe(false);
  });
  it.each([
    ['Epic sues Apple over app store fees', 'Apple sued by Epic over app store fees'],
    ['EU fines Google over adtech', 'Google hit with EU fine over adtech'],
    ['US, China agree to extend tariff truce', 'China and US agree to extend tariff truce'],
  ])('a passive, a sentence turned round or a pair named together is no swap: %s / %s', (a, b) => {
    const [pa, pb] = pair(a, b);
    expect(roleConflict(pa, pb)).toBe(false);
  });
  it.each([
    ['Trump meets Xi in Busan, agrees tariff truce', 'Xi meets Trump in Busan, agrees tariff truce'],
    ['Honda in merger talks with Nissan', 'Nissan in merger talks with Honda'],
  ])('a relation that goes both ways is one story: %s / %s', (a, b) => {
    const [pa, pb] = pair(a, b);
    expect([roleConflict(pa, pb), oneSlotConflict(pa, pb), isNearDuplicate(pa, pb)]).toEqual([false, false, true]);
  });
  it('a lawsuit is no such relation, and two currencies swapped are no actors swapped', () => {
    expect(
      roleConflict(
        ...pair('Toyota files lawsuit against Honda over patents', 'Honda files lawsuit against Toyota over patents'),
      ),
    ).toBe(true);
    expect(
      oneSlotConflict(
        ...pair('Sterling rises against euro after BoE decision', 'Euro rises against sterling after BoE decision'),
      ),
    ).toBe(true);
  });
});

describe('near-duplicate guard: a preview is not the event', () => {
  it('expected / poised / likely / set to against the event', () => {
    for (const a of [
      'BoE expected to cut rates on Thursday',
      'BoE poised to cut rates on Thursday',
      'BoE set to cut rates on Thursday',
    ]) {
      const [pa, pb] = pair(a, 'BoE cuts rates on Thursday');
      expect(previewConflict(pa, pb)).toBe(true);
      expect(isNearDuplicate(a, 'BoE cuts rates on Thursday')).toBe(false);
    }
  });
  it('two previews can be one story', () => {
    const [pa, pb] = pair(
      'BoE expected to cut rates on Thursday',
      'BoE seen cutting rates on Thursday, economists say',
    );
    expect(previewConflict(pa, pb)).toBe(false);
  });
});

describe('near-duplicate guard: a forecast of a figure is not the figure', () => {
  it('revenue forecast beats / revenue beats', () => {
    const [pa, pb] = pair(
      'Broadcom revenue beats estimates on AI chips',
      'Broadcom revenue forecast beats estimates on AI chips',
    );
    expect(forecastConflict(pa, pb)).toBe(true);
    expect(isNearDuplicate(pa, pb)).toBe(false);
  });
  it('a forecast written as a verb or a noun is one forecast', () => {
    const [pa, pb] = pair(
      'Broadcom forecasts Q1 revenue above estimates',
      'Broadcom first-quarter revenue outlook tops forecasts',
    );
    expect(forecastConflict(pa, pb)).toBe(false);
  });
});

describe('near-duplicate guard: the subject company is not named in the other headline', () => {
  it('the same template about another company, known or not to the dictionary', () => {
    const [pa, pb] = pair('PepsiCo raises annual profit forecast', 'Mondelez raises annual profit forecast');
    expect(subjectConflict(pa, pb)).toBe(true);
    expect(isNearDuplicate(pa, pb)).toBe(false);
  });
  it('a company that describes the subject is not the subject (`Apple supplier Foxconn`, `Google-backed Anthropic`)', () => {
    expect(
      subjectConflict(
        ...pair(
          'Apple supplier Foxconn posts record quarterly revenue',
          'Foxconn posts record quarterly revenue on AI servers',
        ),
      ),
    ).toBe(false);
    expect(
      subjectConflict(
        ...pair('Google-backed Anthropic raises $13 billion', 'Anthropic raises $13 billion in new funding'),
      ),
    ).toBe(false);
  });
  it('a company named by its symbol, its name or an alias word is named', () => {
    const [pa, pb] = pair('Microsoft raises dividend 10%', 'MSFT lifts quarterly dividend by 10%');
    expect(subjectConflict(pa, pb)).toBe(false);
    expect(subjectConflict(...pair('MicroStrategy buys $1 billion of bitcoin', 'Strategy adds $1B of bitcoin'))).toBe(
      false,
    );
  });
});

describe('near-duplicate guard: the stage of a case', () => {
  it('brought against decided', () => {
    const [pa, pb] = pair('Shareholders sue Nike over forecast', 'Nike wins ruling against shareholders over forecast');
    expect(pa.flags.get('case')).toEqual(new Set(['filed']));
    expect(qualifierConflict(pa, pb)).toBe(true);
    expect(isNearDuplicate(pa, pb)).toBe(false);
  });
  it('an appeal and its outcome are a stage of their own; losing an appeal and a fine upheld are one', () => {
    const [pa, pb] = pair('Judge rules against Uber in driver pay case', 'Uber appeals ruling in driver pay case');
    expect(pb.flags.get('case')).toEqual(new Set(['appeal', 'decided']));
    expect(qualifierConflict(...pair('Uber wins ruling in driver pay case', 'Uber appeals in driver pay case'))).toBe(
      true,
    );
    expect(qualifierConflict(...pair('Amazon loses appeal against EU fine', 'EU court upholds fine on Amazon'))).toBe(
      false,
    );
    expect(qualifierConflict(pa, pb)).toBe(false);
  });
});

describe('near-duplicate guard: a filler word does not hide the changed slot', () => {
  it('title case, one name changed, `now` added', () => {
    expect(
      isNearDuplicate("Fed's Barr Says Policy Is In A Good Place", "Fed's Kashkari Says Policy Is In A Good Place Now"),
    ).toBe(false);
  });
});

describe('near-duplicate guard: a denial says it is not so', () => {
  it('confirms / denies, and a report turned down is a denial', () => {
    expect(isNearDuplicate('Nestle confirms talks to sell water unit', 'Nestle denies talks to sell water unit')).toBe(
      false,
    );
    expect(prepare('Nestle rejects report it plans to sell water unit').negated).toBe(true);
    expect(prepare('Nestle rejects report it plans to sell water unit').refusal).toBe(false);
  });
});

describe('near-duplicate guard: the span of a report', () => {
  it('weekly / monthly', () => {
    expect(
      isNearDuplicate(
        'Copper heads for weekly loss on demand worries',
        'Copper heads for monthly loss on demand worries',
      ),
    ).toBe(false);
    expect(
      qualifierConflict(...pair('European shares end the week lower', 'European shares end the month lower')),
    ).toBe(true);
  });
});
