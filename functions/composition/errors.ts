// Errors of composing a function: a missing or malformed link, a config that cannot load, an agent refused.
import { ClaimsError } from "../../core/errors.ts";

/** A `Resource.<Name>` the handler needs is not linked to the function, or its properties are malformed. */
export class ResourceLinkError extends ClaimsError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("RESOURCE_LINK", message, options);
  }
}

/** The bundled configuration (agent contract, scenarios) could not be read or is invalid. */
export class ConfigLoadError extends ClaimsError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("CONFIG_LOAD", message, options);
  }
}

/** The registry refused the configured agent: no handler that needs the agent may run. */
export class AgentRefusedError extends ClaimsError {
  constructor(message: string) {
    super("AGENT_REFUSED", message);
  }
}
