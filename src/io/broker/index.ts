// The broker's real edges: its listening socket, its egress, its key files,
// the peer lookup, its randomness; and the local fake provider tests, the
// benchmark and the demo talk to.
export { listenBroker, type BrokerListener, type BrokerListenOptions } from './server.js';
export { undiciUpstream, type ClosableUpstream, type UpstreamOptions } from './upstream.js';
export { realKeySource } from './key-file.js';
export { procPeerUid, type PeerUidLookup } from './peer-uid.js';
export { randomTokenBytes } from './token-source.js';
export { startFakeProvider, fakeUsage, type FakeAnswer, type FakeProvider, type FakeRequest } from './fake-provider.js';
