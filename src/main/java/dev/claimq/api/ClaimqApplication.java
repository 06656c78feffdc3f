package dev.claimq.api;

import jakarta.ws.rs.core.Application;

/**
 * The REST application. The OpenAPI document's front page, servers, security and shared problem
 * responses are in META-INF/openapi.yaml; {@link ContractFilter} adds the responses every operation
 * shares.
 */
public class ClaimqApplication extends Application {}
