"""Seed 001's ticket TCK-4812 as data: the triage transcript and the triage -> infra contract. Lessons 06-08.

At t2 of the seed's worked example, triage hands "el pago falla desde ayer con error 502"
to infra. The transcript below is what triage saw (about 3,000 estimated tokens, with a
system prompt, dead ends and one leaked credential); ``TRIAGE_TO_INFRA`` is what crosses
the boundary (about 8 % of it). Everything is fixed, so every run gives the same package.
"""

import copy
from datetime import UTC, datetime
from typing import Any

from ..contract import HandoffContract
from ..filters import (
    Filter,
    apply_filters,
    distill,
    drop_system_prompts,
    drop_tool_calls,
    record_filters,
    redact_secrets,
)
from ..messages import ToolUseBlock, text_block, tool_result_block, tool_use_block
from ..tools import Tool

TICKET_ID = "TCK-4812"
LEAKED_SECRET = "sk-demo-7Qp2Xv9Lr4Tz8Kw1"
VERIFIED_FACTS = ("502 desde 09:31", "deploy v2.41 a las 09:28")
TRIAGE_KEEP_TOOLS = ("get_merchant", "get_payment_attempts", "get_order", "check_status_page", "search_logs",
                     "list_deploys")

SYSTEM_PROMPT = (
    "Eres el agente de triaje de soporte de una plataforma de pagos para comercios. Clasifica cada "
    "ticket, verifica los hechos con tus herramientas antes de afirmarlos y no prometas plazos que no "
    "puedas cumplir. Reglas internas: los comercios del plan Pro tienen un SLA de 4 horas; un error 5xx "
    "que afecte a varios comercios es de infraestructura y se transfiere al agente infra con un contrato "
    "de handoff; nunca compartas con el cliente nombres de sistemas internos, versiones ni credenciales; "
    "si dudas entre dos equipos, transfiere a quien pueda verificar, no a quien pueda adivinar. Antes de "
    "transferir, separa lo verificado de lo que solo sospechas, anota qué evidencia respalda cada hecho y "
    "no copies el historial entero: el receptor recibe un contrato, no la conversación. Tono: cercano, "
    "breve y sin tecnicismos; no culpes nunca al comercio ni a sus proveedores sin pruebas.")


def _internal(text: str) -> dict[str, Any]:
    return {**text_block(text), "internal": True}


def _call(id: str, name: str, **input: Any) -> ToolUseBlock:
    return tool_use_block(id, name, input)


def _user(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def _assistant(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


_MERCHANT = (
    "merchant_id=M-20931 nombre='Panadería Lucero' plan=Pro país=ES alta=2023-03-14 "
    "integración=checkout-web (plugin oficial 4.2.1, sin cambios desde 2026-05-02) "
    "métodos=[visa, mastercard, bizum] volumen_medio_diario=184 pagos incidencias_abiertas=0 "
    "contacto_técnico='Marta Lucero' notas='ninguna'")

_ATTEMPTS = "\n".join([
    "pagos de M-20931 desde 2026-07-29T00:00Z (UTC), 14 de 96 mostrados:",
    "2026-07-29T08:57:12Z PED-88377 visa       24,50 EUR  aprobado  (312 ms)",
    "2026-07-29T09:12:40Z PED-88381 mastercard 12,00 EUR  aprobado  (298 ms)",
    "2026-07-29T09:26:03Z PED-88384 bizum       8,75 EUR  aprobado  (355 ms)",
    "2026-07-29T09:30:51Z PED-88386 visa       31,20 EUR  aprobado  (341 ms)",
    "2026-07-29T09:31:07Z PED-88387 visa       18,00 EUR  fallido   502 Bad Gateway (2003 ms)",
    "2026-07-29T09:33:44Z PED-88389 mastercard 42,10 EUR  fallido   502 Bad Gateway (2001 ms)",
    "2026-07-29T09:40:19Z PED-88390 bizum       6,30 EUR  fallido   502 Bad Gateway (2004 ms)",
    "2026-07-29T09:52:02Z PED-88394 visa       27,80 EUR  fallido   502 Bad Gateway (2002 ms)",
    "2026-07-29T10:02:31Z PED-88412 visa       55,00 EUR  fallido   502 Bad Gateway (2003 ms)",
    "2026-07-29T11:15:08Z PED-88431 mastercard  9,90 EUR  aprobado  (1874 ms, reintento 2)",
    "2026-07-29T12:48:55Z PED-88467 visa       14,60 EUR  fallido   502 Bad Gateway (2001 ms)",
    "2026-07-29T17:20:13Z PED-88512 bizum      22,40 EUR  fallido   502 Bad Gateway (2005 ms)",
    "2026-07-30T08:05:47Z PED-88540 visa       38,00 EUR  fallido   502 Bad Gateway (2002 ms)",
    "2026-07-30T09:21:36Z PED-88551 mastercard 16,25 EUR  fallido   502 Bad Gateway (2003 ms)",
    "resumen: 0 fallos antes de 09:31 del 29/07; desde entonces 81 % fallidos, todas las marcas y "
    "métodos, todos con 502 y duración cercana a 2 s"])

_ORDER = "\n".join([
    "pedido PED-88412 de M-20931: 55,00 EUR, 2026-07-29T10:02:31Z, tarjeta visa ****4417 (emisor Banco Azahar)",
    "3-D Secure: completado (frictionless) | autorización: no recibida | respuesta al checkout: 502 Bad Gateway",
    "reintentos del comprador: 2 (10:03:10Z y 10:04:02Z), ambos 502 | pedido cancelado por el comprador a 10:06Z"])

_ISSUER = ("Banco Azahar: operativo; tasa de autorización de las últimas 24 h 97,8 % (media 98,1 %); "
           "sin mantenimientos programados; última incidencia el 2026-06-11")

_KB = "\n".join([
    "3 artículos para 'error 502 al pagar':",
    "KB-0113 'El cliente ve 502 al volver del banco': suele ser una URL de retorno mal configurada en el "
    "plugin; revisar Ajustes > Pagos > URL de retorno. Aplica a instalaciones nuevas.",
    "KB-0241 'Errores intermitentes en el checkout': pedir al comprador que borre la caché del navegador "
    "o pruebe otra red; si persiste, abrir ticket a infraestructura.",
    "KB-0307 'Bizum rechazado con 502': el banco emisor no respondió; reintentar pasados 10 minutos."])

_SIMILAR = "\n".join([
    "tickets con '502' abiertos en las últimas 48 h (4):",
    "TCK-4809  M-11870  2026-07-29T10:14Z  'no puedo cobrar con tarjeta, sale error'  estado: en espera del cliente",
    "TCK-4810  M-52001  2026-07-29T12:40Z  'los pagos tardan y luego fallan'  estado: sin asignar",
    "TCK-4811  M-30452  2026-07-29T16:05Z  'error 502 en el checkout desde esta mañana'  estado: sin asignar",
    "TCK-4798  M-07733  2026-07-28T18:22Z  '502 al entrar al panel'  estado: resuelto (caché del navegador)",
    "nota: ninguno está vinculado todavía a un incidente; TCK-4798 es anterior y de otro sistema (panel)"])

_STATUS = "\n".join([
    "estado público a 2026-07-30T09:52Z:",
    "pagos (API de cobro): DEGRADADO desde 2026-07-29T09:35Z - 'tasa elevada de errores en cobros con tarjeta'",
    "checkout-web: operativo | panel de comercios: operativo | liquidaciones: operativo | webhooks: operativo",
    "incidente INC-2291 abierto por la monitorización automática; sin responsable asignado todavía",
    "historial: INC-2270 (2026-07-12, liquidaciones con retraso, resuelto en 2 h); INC-2254 (2026-06-30, "
    "webhooks duplicados, resuelto en 5 h); mantenimiento programado: ninguno esta semana"])

_CDN = ("región eu-west: operativo; 0 incidentes en 72 h; latencia p95 38 ms; tasa 5xx en el borde 0,02 % "
        "(dentro de lo normal); sin cambios de configuración desde 2026-07-21")

_LOGS = "\n".join([
    "payments-api, status:502, desde 2026-07-29T09:00Z (18 de 4.318 líneas):",
    "2026-07-29T09:28:41Z INFO  gateway-connector arranque: región=eu-west timeout_ms=2000 reintentos=0 "
    f"api_key={LEAKED_SECRET} pool=32",
    "2026-07-29T09:28:43Z INFO  gateway-connector listo, versión=v2.41",
    "2026-07-29T09:29:58Z INFO  POST /v1/charges 200 tras 1712 ms (acquirer=redsys-eu) merchant=M-40218",
    "2026-07-29T09:30:51Z INFO  POST /v1/charges 200 tras 341 ms (acquirer=redsys-eu) merchant=M-20931",
    "2026-07-29T09:31:07Z ERROR POST /v1/charges 502 upstream timeout tras 2000 ms (acquirer=redsys-eu) merchant=M-20931",
    "2026-07-29T09:31:09Z ERROR POST /v1/charges 502 upstream timeout tras 2000 ms (acquirer=redsys-eu) merchant=M-11870",
    "2026-07-29T09:31:12Z ERROR POST /v1/charges 502 upstream timeout tras 2001 ms (acquirer=redsys-eu) merchant=M-30452",
    "2026-07-29T09:31:15Z WARN  circuit-breaker gateway-connector medio abierto (tasa de error 38 %)",
    "2026-07-29T09:33:44Z ERROR POST /v1/charges 502 upstream timeout tras 2001 ms (acquirer=redsys-eu) merchant=M-20931",
    "2026-07-29T09:35:00Z WARN  alerta payments-5xx-rate > 5 % durante 3 min -> INC-2291",
    "2026-07-29T09:36:22Z ERROR POST /v1/charges 502 upstream timeout tras 2002 ms (acquirer=redsys-eu) merchant=M-11870",
    "2026-07-29T09:41:05Z WARN  circuit-breaker gateway-connector abierto 30 s (tasa de error 74 %)",
    "2026-07-29T09:41:35Z INFO  circuit-breaker gateway-connector medio abierto, probando 5 peticiones",
    "2026-07-29T09:41:37Z ERROR POST /v1/charges 502 upstream timeout tras 2000 ms (acquirer=redsys-eu) merchant=M-52001",
    "2026-07-29T11:15:08Z INFO  POST /v1/charges 200 tras 1874 ms (reintento 2) merchant=M-20931",
    "2026-07-29T14:02:51Z ERROR POST /v1/charges 502 upstream timeout tras 2001 ms (acquirer=redsys-eu) merchant=M-30452",
    "2026-07-29T19:47:10Z ERROR POST /v1/charges 502 upstream timeout tras 2004 ms (acquirer=redsys-eu) merchant=M-07733",
    "2026-07-30T09:21:36Z ERROR POST /v1/charges 502 upstream timeout tras 2003 ms (acquirer=redsys-eu) merchant=M-20931",
    "comercios distintos con 502 desde 09:31 del 29/07: 214; ningún 502 entre 09:00 y 09:31"])

_DEPLOYS = "\n".join([
    "despliegues de payments-api desde 2026-07-27:",
    "v2.39  2026-07-24T11:02Z  'nuevas traducciones del recibo'  aprobado por: release-bot  estado: reemplazado",
    "v2.40  2026-07-27T15:10Z  'ajuste de métricas de liquidación'  aprobado por: release-bot  estado: reemplazado",
    "v2.41  2026-07-29T09:28Z  'refactor del conector de pasarela; timeout 2 s, reintentos desactivados'  "
    "aprobado por: j.ortega  estado: activo",
    "no hay despliegues posteriores; rollback disponible a v2.40 (requiere aprobación de negocio)"])

_TRANSCRIPT: list[Any] = [
    {"role": "system", "content": SYSTEM_PROMPT},
    {"role": "user", "content": "Hola, el pago falla desde ayer con error 502. Mis clientes no pueden pagar en la "
                                "tienda online y estoy perdiendo ventas. Ya llamé ayer por la tarde y me dijeron "
                                "que lo miraban, pero sigue igual. ¿Pueden mirarlo ya, por favor?"},
    _assistant(text_block("Siento mucho que sigas así desde ayer. No encuentro un ticket anterior con tu correo, "
                          "así que abro este y lo llevo yo desde ahora. Antes de tocar nada, ¿me confirmas si "
                          "has cambiado algo en la tienda o en el plugin de pagos esta semana?")),
    {"role": "user", "content": "Que yo sepa no. Lo único, el lunes subimos fotos nuevas de los productos de "
                                "verano, pero eso no tiene nada que ver con pagar, ¿no? Ya no sé qué pensar."},
    _assistant(text_block("Tranquila: unas fotos nuevas no cambian cómo se cobra. ¿Me indicas tu identificador "
                          "de comercio y, si lo tienes a mano, el número de algún pedido que haya fallado?")),
    {"role": "user", "content": "Comercio M-20931, Panadería Lucero. Uno que falló es el PED-88412, ayer sobre las "
                                "diez de la mañana. No hemos tocado nada de la tienda, lo juro."},
    _assistant(_internal("Plan Pro: SLA 4 h desde la apertura. Primero descartar un error del cliente."),
               _call("toolu_4812_01", "get_merchant", merchant_id="M-20931")),
    _user(tool_result_block("toolu_4812_01", _MERCHANT)),
    _assistant(text_block("La integración no ha cambiado desde mayo. Miro los intentos de pago desde ayer."),
               _call("toolu_4812_02", "get_payment_attempts", merchant_id="M-20931", since="2026-07-29T00:00Z")),
    _user(tool_result_block("toolu_4812_02", _ATTEMPTS)),
    _assistant(text_block("Veo que desde ayer por la mañana casi todos los cobros fallan. Una pregunta para "
                          "acotarlo: ¿el error lo ven tus clientes en tu tienda o en la página de su banco?")),
    {"role": "user", "content": "En la tienda, al darle a pagar sale una pantalla blanca que pone 502 Bad Gateway. "
                                "Mi sobrino, que nos hizo la web, dice que será el hosting, pero el resto de la "
                                "tienda carga perfectamente. Un cliente me dijo que a él el banco le pidió el "
                                "código del móvil y después salió el error. Esto nos pasa justo en verano."},
    _assistant(text_block("Gracias, eso ayuda. Reviso ese pedido y el estado del banco emisor a la vez."),
               _call("toolu_4812_08", "get_order", order_id="PED-88412"),
               _call("toolu_4812_09", "check_issuer_status", issuer="Banco Azahar")),
    _user(tool_result_block("toolu_4812_08", _ORDER), tool_result_block("toolu_4812_09", _ISSUER)),
    _assistant(text_block("El banco autentica bien y está operativo; la autorización nunca llega. Fallan todas las "
                          "marcas y métodos a la vez, así que no parece la URL de retorno ni un banco concreto. "
                          "Compruebo la base de conocimiento por si es un caso conocido."),
               _call("toolu_4812_03", "search_kb", query="error 502 al pagar")),
    _user(tool_result_block("toolu_4812_03", _KB)),
    _assistant(text_block("Ningún artículo encaja: el plugin no ha cambiado y el fallo no es intermitente ni de "
                          "un solo método. Busco si otros comercios han abierto tickets parecidos."),
               _call("toolu_4812_10", "search_tickets", query="502", since="2026-07-28")),
    _user(tool_result_block("toolu_4812_10", _SIMILAR)),
    _assistant(text_block("Hay al menos tres comercios más con el mismo síntoma desde ayer. Reviso a la vez la "
                          "página de estado y la red de distribución."),
               _call("toolu_4812_04", "check_status_page", service="pagos"),
               _call("toolu_4812_05", "check_cdn_status", region="eu-west")),
    _user(tool_result_block("toolu_4812_04", _STATUS), tool_result_block("toolu_4812_05", _CDN)),
    _assistant(_internal("CDN descartada. Pagos degradado: buscar el primer 502 en los logs."),
               _call("toolu_4812_06", "search_logs", service="payments-api", query="status:502",
                     since="2026-07-29T09:00Z")),
    _user(tool_result_block("toolu_4812_06", _LOGS)),
    _assistant(text_block("El primer 502 es de las 09:31 y afecta a 214 comercios. Veo qué se desplegó justo antes."),
               _call("toolu_4812_07", "list_deploys", service="payments-api", since="2026-07-27")),
    _user(tool_result_block("toolu_4812_07", _DEPLOYS)),
    _assistant(text_block("Gracias por la paciencia. Hemos confirmado que no es un problema de tu tienda: el "
                          "servicio de pagos está degradado desde ayer por la mañana y afecta a más comercios. "
                          "Paso el caso al equipo de infraestructura con todo lo que hemos verificado.")),
    {"role": "user", "content": "Vale, pero ¿cuánto van a tardar? Hoy es día de pedidos grandes y no puedo "
                                "pasarme la mañana cobrando por transferencia."},
    _assistant(text_block("Tu plan tiene un tiempo de resolución de 4 horas desde que abriste el ticket, y "
                          "infraestructura ya tiene el caso con prioridad alta. Te escribiré en cuanto haya "
                          "novedades; no hace falta que cambies nada en tu tienda.")),
]


def triage_transcript() -> list[dict[str, Any]]:
    """A fresh copy of triage's transcript of TCK-4812 at t2, before any filter."""
    return copy.deepcopy(_TRANSCRIPT)


TRIAGE_TO_INFRA = distill(
    handoff_id="TCK-4812-H1", task_id=TICKET_ID, sender="triage", receiver="infra",
    reason="pagos degradado: no es error de cliente",
    next_objective="restaurar pagos", state_version=3, verified=VERIFIED_FACTS,
    hypotheses=["regresión en v2.41 (timeout 2 s)"],
    done=["descartado error de cliente"], remaining=["correlacionar con deploy"], constraints=["SLA 4h"],
    evidence=[{"kind": "check", "reference": "status:pagos"},
              {"kind": "artifact", "reference": "logs:payments-api#502"},
              {"kind": "artifact", "reference": "deploys:payments-api/v2.41"}],
    artifacts=[{"kind": "transcript", "uri": "tickets/TCK-4812/triage.json"}],
    allowed_tools=["check_status_page", "search_logs", "list_deploys"],
    forbidden_actions=["rollback_deploy sin aprobación"], acceptance=["cobros sin 502 durante 15 min"],
    on_reject="escalate",
    created_at=datetime(2026, 7, 30, 9, 58, tzinfo=UTC))


def triage_filters() -> list[Filter]:
    """The filters triage applies before the handoff: secrets out, internal notes out, dead ends out."""
    return [redact_secrets(), drop_system_prompts(), drop_tool_calls(keep=TRIAGE_KEEP_TOOLS)]


def filtered_handoff() -> tuple[list[dict[str, Any]], HandoffContract]:
    """The filtered transcript (the artifact) and the contract with the filters recorded."""
    messages, names = apply_filters(triage_transcript(), triage_filters())
    return messages, record_filters(TRIAGE_TO_INFRA, names)


def infra_tools() -> dict[str, Tool]:
    """Deterministic stand-ins for infra's tools, for running the receiver of TRIAGE_TO_INFRA."""
    return {
        "check_status_page": lambda service: f"{service}: DEGRADADO (INC-2291)",
        "search_logs": lambda service, query, since="": f"{service} {query}: primer error 09:31:07Z, 502 tras 2000 ms",
        "list_deploys": lambda service, since="": "v2.41 2026-07-29T09:28Z activo; v2.40 reemplazado",
        "rollback_deploy": lambda service, to_version: f"{service} revertido a {to_version}",
    }
