from django.apps import AppConfig


class DealsConfig(AppConfig):
    """An account's work: deals, their lender searches and ranking, placements and term sheets."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "deals"

    def ready(self) -> None:
        from django.db.models.signals import post_save

        from deals import tasks  # noqa: F401  (registers the jobs the services send by name)
        from deals.outreach import inbound_api
        from deals.pipeline.services import on_account_saved
        from deals.searches import health
        from deals.workspace import admin as workspace
        from deals.workspace import lender_page
        from lenders import admin as lenders_admin
        from lev import admin_site
        from lev.endpoints import register_endpoint

        health.register()
        # The inbound replies' endpoint reads a raw message up to its own bound (above the API's).
        register_endpoint(inbound_api.PATH, body_limit=inbound_api.body_limit, unreadable=inbound_api.unreadable_body)
        # The admin's home page is the deal team's, and its app list opens with the team's sections.
        admin_site.register_home(workspace.home, workspace.TEMPLATE)
        admin_site.register_sections(workspace.SECTIONS)
        # A lender's page shows the person's contacts there and its accounts' history with the lender.
        lenders_admin.register_profile_panel(lender_page.lender_history, lender_page.TEMPLATE)
        # A new account starts with the default pipeline stages (the account lives in lev, below).
        post_save.connect(on_account_saved, sender="accounts.Account", dispatch_uid="deals.pipeline.defaults")
