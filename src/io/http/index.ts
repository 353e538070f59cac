// The entry of io/http/: the loopback HTTP server.
export { loopbackHttp } from './loopback.js';
