/**
 * Lower-case words that make the next capitalised word a surname: titles (`Governor Abbott`), given names (`Fiona
 * Apple`). A company named like a person (`John Deere`) has that whole alias, which matches first.
 */
export const TITLES = new Set(
  `mr mrs ms dr sir dame lord lady prof professor judge justice senator sen rep representative congressman
  congresswoman governor gov mayor president chancellor minister premier`.split(/\s+/).filter(Boolean),
);

export const GIVEN_NAMES = new Set(
  `aaron adam adrian alan albert alex alexander alexandra alice alicia alison amanda amy andrea andrew angela anna
  anne anthony antonio arthur ashley barbara barry ben benjamin bernard beth betty bill billy bob bobby brad bradley
  brandon brenda brian bruce bryan carl carlos carol caroline catherine charlie chris christian christina christine
  christopher chuck claire colin craig cristina dan daniel danny dave david dean debbie deborah dennis derek diana
  diane dick don donald donna doug douglas dylan ed eddie edward elaine eleanor elizabeth ellen emily emma eric erica
  eugene eva evan frank fred frederick gary george gerald gina gordon grace graham greg gregory hannah harold harry
  heather helen henry howard hugh ian jack jackie jacob james jamie jane janet jason jean jeff jeffrey jennifer jenny
  jeremy jerry jessica jill jim jimmy joan joe joel john johnny jon jonathan jose joseph josh joshua joyce juan judith
  judy julia julie justin karen kate katherine kathleen kathy keith kelly ken kenneth kevin kim kyle larry laura
  lauren lawrence lee leonard linda lisa liz lou louis lucy luis margaret maria marie mark martha martin mary matt
  matthew megan melissa michael michelle mike nancy naomi natalie nathan neil nicholas nick nicole noel norman oliver
  pamela pat patricia patrick paul paula peter phil philip phillip rachel ralph randy ray raymond rebecca richard rick
  rob robert robin roger ron ronald rose roy russell ruth ryan sally sam samantha samuel sandra sara sarah scott sean
  sharon stephanie stephen steve steven susan tara ted teresa terry thomas tim timothy tina todd tom tommy tony tracy
  travis victor victoria vincent walter wayne wendy william willie zach fiona hillary kamala elon warren jamie jerome
  janet christine mario olaf emmanuel giorgia narendra xi vladimir volodymyr rishi keir boris theresa angela friedrich
  evangeline keisuke nikola enzo wolfgang miuccia maurizio milton helmut hans jurgen klaus dieter gerhard heinz karl
  franz otto werner stefan andreas markus thomas pierre jacques francois jean-pierre jean-luc bernard gerard philippe
  marco luca giovanni giuseppe francesco alessandro matteo lorenzo paolo silvio sergio carlo gianni pablo javier miguel
  alejandro diego fernando rafael ricardo sofia lucia carmen ana isabel mateo joao pedro paulo lula jair hiroshi takeshi
  kenji akira yuki haruki shinzo fumio yoshihide masayoshi kazuo ichiro naoki takashi wei ming jun hui lei jian chen
  raj rahul amit anil mukesh gautam ratan sunil vijay priya ashok sanjay vladislav sergei dmitry alexei ivan oleg
  mohammed muhammad ahmed ali omar hassan fatima leila yusuf mustafa recep benjamin yair ehud kofi nelson desmond
  cyril jacinda scott anthony malcolm kevin penny pauline chrissy barack joe kamala mitt nikki ron gavin greta taylor
  beyonce oprah lebron serena venus roger rafa novak cristiano lionel zinedine wayne harrison evangelina`.split(/\s+/).filter(Boolean),
);
