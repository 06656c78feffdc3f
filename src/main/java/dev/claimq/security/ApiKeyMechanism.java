package dev.claimq.security;

import io.quarkus.security.credential.TokenCredential;
import io.quarkus.security.identity.IdentityProviderManager;
import io.quarkus.security.identity.SecurityIdentity;
import io.quarkus.security.identity.request.AuthenticationRequest;
import io.quarkus.security.identity.request.TokenAuthenticationRequest;
import io.quarkus.security.runtime.QuarkusPrincipal;
import io.quarkus.security.runtime.QuarkusSecurityIdentity;
import io.quarkus.vertx.http.runtime.security.ChallengeData;
import io.quarkus.vertx.http.runtime.security.HttpAuthenticationMechanism;
import io.quarkus.vertx.http.runtime.security.HttpSecurityUtils;
import io.smallrye.mutiny.Uni;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Reads {@code Authorization: Bearer <key>} and hands the key to {@link ApiKeyIdentityProvider}. No
 * header means anonymous, which every API endpoint refuses with 401 (health stays open).
 */
@ApplicationScoped
public class ApiKeyMechanism implements HttpAuthenticationMechanism {
  static final String CHALLENGE = "Bearer realm=\"claimq\"";
  private static final String BEARER = "bearer ";

  private final ApiKeys keys;

  ApiKeyMechanism(ApiKeys keys) {
    this.keys = keys;
  }

  @Override
  public Uni<SecurityIdentity> authenticate(
      RoutingContext context, IdentityProviderManager identityProviderManager) {
    if (!keys.enabled()) {
      return Uni.createFrom().item(UNRESTRICTED);
    }
    List<String> headers = context.request().headers().getAll("Authorization");
    if (headers.isEmpty()) {
      return Uni.createFrom().optional(Optional.empty());
    }
    String header = headers.get(0);
    // Any other scheme, or an empty key, is a key that matches nothing: 401, not anonymous. So are
    // two Authorization headers: which key acts would be a guess.
    String key =
        headers.size() == 1 && header.regionMatches(true, 0, BEARER, 0, BEARER.length())
            ? header.substring(BEARER.length()).strip()
            : "";
    TokenAuthenticationRequest request =
        new TokenAuthenticationRequest(new TokenCredential(key, "bearer"));
    HttpSecurityUtils.setRoutingContextAttribute(request, context);
    return identityProviderManager.authenticate(request);
  }

  @Override
  public Uni<ChallengeData> getChallenge(RoutingContext context) {
    return Uni.createFrom().item(new ChallengeData(401, "WWW-Authenticate", CHALLENGE));
  }

  @Override
  public Set<Class<? extends AuthenticationRequest>> getCredentialTypes() {
    return Set.of(TokenAuthenticationRequest.class);
  }

  /** Who everyone is when authentication is switched off. */
  private static final SecurityIdentity UNRESTRICTED =
      QuarkusSecurityIdentity.builder()
          .setPrincipal(new QuarkusPrincipal("anonymous"))
          .addRoles(Role.ALL)
          .addAttribute(
              ApiKeyIdentityProvider.KEY_ATTRIBUTE, new ApiKey("anonymous", Role.ALL, Set.of(), ""))
          .build();
}
