// The reference plain workflow, exactly as written there (tests load it as is).
export const REFERENCE = `workflow: activation_nudge
version: 3
trigger: user.signed_up
steps:
  - id: pause
    wait: 48h
  - id: fetch
    action: app.load_user
    input: { id: "{{ trigger.user_id }}" }
  - id: gate
    condition: "fetch.activated == false"   # false ends the run as skipped
  - id: nudge
    action: mail.send_template
    input: { to: "{{ fetch.email }}", template: nudge }
    key: "nudge/{{ instance.id }}"
    retry: { max: 3, backoff: exponential, base: 30s, jitter: true }
`;
