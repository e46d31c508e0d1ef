-- A frontier API model, as the study's first configuration: Anthropic's Messages API.
-- price_in / price_out: USD per million tokens as a published price list gave them for this
-- model (Claude Sonnet 4.5: $3 and $15, as listed on 2025-11-25); check the provider's page
-- before trusting a cost kreach prints.
return {
  provider = "anthropic",
  model = "claude-sonnet-4-5",
  api_key_env = "ANTHROPIC_API_KEY",
  temperature = 1.0,
  max_tokens = 8192,
  price_in = 3.0,
  price_out = 15.0,
  format = "lua",
  notes = "frontier API model, no extended reasoning",
}
