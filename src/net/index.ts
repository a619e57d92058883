/** Where outgoing requests may go: address rules (./address.ts), checked and pinned resolution (./destination.ts). */
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
