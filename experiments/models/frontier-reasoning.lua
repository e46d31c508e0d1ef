-- The same frontier model with extended reasoning (Anthropic's "thinking": a budget of tokens
-- spent before the answer; the API requires temperature 1 with it, and counts the thinking as
-- output tokens). The reply's thinking blocks are not part of the candidate: kreach takes the
-- text blocks. Prices as in frontier.lua.
return {
  provider = "anthropic",
  model = "claude-sonnet-4-5",
  api_key_env = "ANTHROPIC_API_KEY",
  temperature = 1.0,
  max_tokens = 32000,
  price_in = 3.0,
  price_out = 15.0,
  format = "lua",
  extra = { thinking = { type = "enabled", budget_tokens = 16000 } },
  notes = "frontier API model with extended reasoning (16000 thinking tokens)",
}
