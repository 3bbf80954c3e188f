/**
 * What each operation field means, in a sentence (docs/gateway-api.md, Operations), for the
 * published command schemas: a reader in another language sees them as the doc comments of
 * the fields. The rule itself (type, bounds, form) is stated by the schema beside it.
 *
 * Keys are field paths as in validation errors without indexes (`viber.signature`,
 * `viber_carousel.image`); a `type:path` key describes the field of one type only.
 */
export const fieldDescriptions: Readonly<Record<string, string>> = {
  type: 'The operation type.',
  id: "The client's message id.",
  'template/delete:id': 'The identifier of the template to delete (a string for this type).',
  'template/viber/delete:id': 'The identifier of the Viber template to delete.',
  phone: 'The recipient.',
  hook: 'Where the gateway posts the status callback of this message.',
  sms_message: 'The SMS text.',
  sms_signature: 'The SMS sender name (alpha-name); it must be registered with the account.',
  sms_lifetime: 'How long the SMS may wait for delivery; the gateway defaults to 172800.',
  short_link: 'Shorten and track the links of the text (if the tariff has it).',
  unsubscribe_link: 'Add an unsubscribe link (if the tariff has it).',
  message: 'The one-time password.',
  telegram_lifetime: 'How long the password may wait for delivery; the gateway defaults to 172800.',
  rcs_message: 'The RCS text.',
  rcs_signature: 'The RCS sender name.',
  rcs_image: 'The image shown with the message.',
  rcs_button: 'The caption of the button.',
  rcs_link: 'The URL the button opens.',
  rcs_lifetime: 'How long the RCS message may wait for delivery; the gateway defaults to 172800.',
  viber_type:
    'The kind of Viber message; for rcs+viber+sms it decides which Viber fields are required.',
  viber_signature: 'The Viber sender name.',
  viber_message: 'The Viber text.',
  viber_image: 'The image of the Viber message.',
  viber_link: 'The URL the Viber button opens.',
  viber_button: 'The caption of the Viber button.',
  viber_lifetime: 'How long the Viber message may wait for delivery, in seconds.',
  viber_carousel: 'The cards of a Viber carousel.',
  'viber_carousel.caption': 'The caption of the card.',
  'viber_carousel.image': 'The image of the card.',
  'viber_carousel.url':
    'The URL the card opens (not checked as a URL: the gateway types it as a string).',
  'viber_carousel.button': 'The caption of the card button.',
  pipeline: 'The channels to try, in order; each named channel (but rcs) needs its object.',
  sms: 'The SMS stage of the pipeline.',
  'sms.message': 'The SMS text.',
  'sms.signature': 'The SMS sender name.',
  telegram: 'The Telegram stage of the pipeline.',
  'telegram.message':
    'The Telegram text (the 4-to-8-digit rule of the telegram operation does not apply here).',
  viber: 'The Viber stage of the pipeline.',
  'viber.message': 'The Viber text.',
  'viber.signature': 'The Viber sender name.',
  'viber.type': 'The kind of Viber message.',
  voice: 'The voice stage of the pipeline.',
  'voice.gender': 'The voice.',
  'voice.language': 'The language of the speech.',
  'voice.name': 'The language model.',
  whatsapp:
    'The WhatsApp stage of the pipeline: `message` and `signature`, which the gateway does not check.',
  rcs: 'The RCS stage of the pipeline: `signature` and `message`; not required even when named.',
  template: 'The template text (for template/delete: the exact text to delete).',
  name: 'The name of the template.',
};
