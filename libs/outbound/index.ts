export { refusalOf, type AddressRefusal } from './address-ranges.js';
export { AddressRefusedError, createPinnedLookup, systemResolver } from './pinned-lookup.js';
export { dropHopByHop, flattenHeaders, hopByHopHeaders } from './headers.js';
export {
  checkTarget,
  createOutboundClient,
  OutboundError,
  type OutboundClient,
  type OutboundFailure,
  type OutboundOptions,
  type OutboundRequest,
  type OutboundResponse,
} from './client.js';
export {
  createRelayedClient,
  type RelayedAnswer,
  type RelayedCall,
  type RelayedClientOptions,
  serviceOutboundClient,
} from './relayed-client.js';
export { createSmtpSender, type SmtpMail, type SmtpOutcome, type SmtpSender } from './smtp-sender.js';
