/**
 * The addresses an outgoing request may reach (webhook deliveries, feed polls): the one reading of an
 * IP address (./address.ts) and the resolution that checks every address and pins the connection to
 * them (./destination.ts).
 */
export { ipv6Bytes, isNonPublicAddress, nonPublicReason } from './address.js';
export {
  AddressRefused,
  bareHost,
  pinnedLookup,
  resolveChecked,
  ResolveError,
  systemLookup,
  type Lookup,
  type ResolvedAddress,
} from './destination.js';
