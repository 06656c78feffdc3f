package dev.claimq.security;

import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.identity.AuthenticationRequestContext;
import io.quarkus.security.identity.IdentityProvider;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.identity.request.TokenAuthenticationRequest;
import io.quarkus.security.runtime.QuarkusPrincipal;
import io.quarkus.security.runtime.QuarkusSecurityIdentity;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

/** Turns a presented key into the identity of the configured key it hashes to. */
@ApplicationScoped
public class ApiKeyIdentityProvider implements IdentityProvider<TokenAuthenticationRequest> {
  static final String KEY_ATTRIBUTE = "claimq.api-key";

  private final ApiKeys keys;

  ApiKeyIdentityProvider(ApiKeys keys) {
    this.keys = keys;
  }

  @Override
  public Class<TokenAuthenticationRequest> getRequestType() {
    return TokenAuthenticationRequest.class;
  }

  @Override
  public Uni<SecurityIdentity> authenticate(
      TokenAuthenticationRequest request, AuthenticationRequestContext context) {
    return keys.find(request.getToken().getToken())
        .map(
            key ->
                Uni.createFrom()
                    .item(
                        (SecurityIdentity)
                            QuarkusSecurityIdentity.builder()
                                .setPrincipal(new QuarkusPrincipal(key.name()))
                                .addRoles(key.roles())
                                .addAttribute(KEY_ATTRIBUTE, key)
                                .build()))
        .orElseGet(
            () -> Uni.createFrom().failure(new AuthenticationFailedException("unknown API key")));
  }
}
