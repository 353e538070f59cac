// What a model session's environment says about the broker: where it is and the run's capability for the session,
// in the variables each CLI reads (claude: ANTHROPIC_BASE_URL and ANTHROPIC_AUTH_TOKEN, sent as a Bearer token;
// codex: the model provider's env_key, AGENT_RUNNER_BROKER_TOKEN; a command agent: both), and without any login
// variable a runner or a registry could have passed along. Root sets these over whatever the runner asked, so the
// capability never passes through the runner. Pure.

/** The capability token, as codex's `env_key` and a command agent read it. */
export const BROKER_TOKEN_VARIABLE = 'AGENT_RUNNER_BROKER_TOKEN';
/** http://127.0.0.1:PORT of the run's broker. */
export const BROKER_URL_VARIABLE = 'AGENT_RUNNER_BROKER_URL';
/** Where a command agent finds its session id for the session header (claude and codex get theirs in settings). */
export const BROKER_SESSION_VARIABLE = 'AGENT_RUNNER_BROKER_SESSION';

/** Provider logins a session must not carry beside its capability (the broker holds the key). */
export const PROVIDER_LOGIN_VARIABLES: readonly string[] = [
  'ANTHROPIC_API_KEY',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'OPENAI_API_KEY',
  'CODEX_API_KEY',
];

/** The variables a session of the run gets for its capability `token` at the broker `url`. */
export function brokerEnvironment(url: string, token: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_AUTH_TOKEN: token,
    // Claude Code's telemetry and update checks go nowhere through the lock anyway; asking it not to saves retries.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    [BROKER_URL_VARIABLE]: url,
    [BROKER_TOKEN_VARIABLE]: token,
  };
}

/** A model session's environment: `env` without any provider login, the broker's variables over it. */
export function withCapability(
  env: Readonly<Record<string, string>>,
  brokerEnv: Readonly<Record<string, string>>,
): Record<string, string> {
  return { ...withoutProviderLogins(env), ...brokerEnv };
}

/** `env` without any provider login variable. */
export function withoutProviderLogins(env: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !PROVIDER_LOGIN_VARIABLES.includes(name)));
}
