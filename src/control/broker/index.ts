export { brokerServeCommand, startRunBroker, type RunBroker, type StartRunBrokerInput } from './run-broker.js';
